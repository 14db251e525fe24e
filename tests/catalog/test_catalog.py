"""The failure catalog: entry files, their signal patterns, the rendered page and the CLI.

Entries are data the diagnosis engine trusts blindly, so everything the engine and the
benchmark rely on is checked here: schema, ids, cross references, and that every pattern
means the same thing to Python's `re` and to `grep -E` (the benchmark's baseline).
"""

from __future__ import annotations

import copy
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from denpex import catalog
from denpex.catalog.render import to_markdown
from paths import ROOT

SCHEMA = json.loads((ROOT / "shared-schema" / "catalog-entry.schema.json").read_text())
SAMPLES_FILE = ROOT / "tests" / "fixtures" / "catalog_signal_samples.toml"

REQUIRED_IDS = {
    # Required by the product brief.
    "nccl-timeout", "nccl-network-error", "cuda-oom", "host-oom", "nan-inf-loss",
    "loss-scale-overflow", "loss-spike", "gradient-explosion", "gpu-hardware-fault",
    "cuda-illegal-memory-access", "cuda-device-assert", "cuda-environment-mismatch",
    "dataloader-worker-killed", "checkpoint-load-error", "checkpoint-save-error",
    "rank-exception", "process-killed-signal", "sdc-gradual-parameter-drift",
    "sdc-transient-corruption", "dp-replica-divergence",
    # Communication, launcher and checkpoint entries the diagnosis engine routes to.
    "collective-mismatch", "rendezvous-failure", "port-in-use", "nccl-internal-error",
    "slurm-job-terminated", "ddp-unused-parameters",
}  # fmt: skip

_GROUP_NAME = re.compile(r"\(\?P<\w+>")

ENTRY_FILES = sorted(
    (
        p
        for p in (resources.files("denpex.catalog") / "entries").iterdir()
        if p.name.endswith(".toml")
    ),
    key=lambda p: p.name,
)
ENTRIES: list[dict[str, Any]] = [tomllib.loads(p.read_text(encoding="utf-8")) for p in ENTRY_FILES]
SIGNALS = [(e["id"], s) for e in ENTRIES for s in e["signals"]]


def _sid(entry_id: str, signal: dict[str, Any]) -> str:
    return f"{entry_id}.{signal['name']}"


def _samples() -> dict[str, str]:
    return tomllib.loads(SAMPLES_FILE.read_text(encoding="utf-8"))["samples"]


# --- entry files ---------------------------------------------------------------------


@pytest.mark.parametrize("path", ENTRY_FILES, ids=lambda p: p.name)
def test_entry_validates_against_schema(path: Any) -> None:
    entry = tomllib.loads(path.read_text(encoding="utf-8"))
    validator = jsonschema.Draft202012Validator(SCHEMA)
    errors = [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(entry)]
    assert not errors, f"{path.name}: " + "; ".join(errors)
    assert entry["id"] == path.name.removesuffix(".toml")


def test_schema_itself_is_valid() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("value", ["true", 1, None, ["nccl-timeout"]])
@pytest.mark.parametrize("field", ["hang", "exit_report", "signals.after_bad_exit"])
def test_schema_rejects_a_non_boolean_behaviour_flag(field: str, value: Any) -> None:
    # Attribution reads these as booleans; "true" in quotes would otherwise be truthy.
    entry = copy.deepcopy(catalog.get("process-killed-signal"))
    where, _, name = field.rpartition(".")
    (entry["signals"][0] if where else entry)[name] = value
    validator = jsonschema.Draft202012Validator(SCHEMA)
    assert [e.validator for e in validator.iter_errors(entry)] == ["type"]


def test_loader_sees_every_file() -> None:
    assert sorted(catalog.entries()) == sorted(e["id"] for e in ENTRIES)


def test_required_ids_present_and_catalog_size() -> None:
    ids = {e["id"] for e in ENTRIES}
    assert sorted(REQUIRED_IDS - ids) == []
    assert len(ids) >= 30, f"only {len(ids)} entries"


def test_related_ids_exist_and_are_not_self() -> None:
    ids = {e["id"] for e in ENTRIES}
    dangling = [(e["id"], r) for e in ENTRIES for r in e["related"] if r not in ids]
    assert dangling == []
    assert [e["id"] for e in ENTRIES if e["id"] in e["related"]] == []


def test_signal_names_unique_and_conditions_refer_to_them() -> None:
    for e in ENTRIES:
        names = [s["name"] for s in e["signals"]]
        assert len(names) == len(set(names)), e["id"]
        for cond in e.get("conditions", []):
            referred = cond.get("signals", []) + ([cond["signal"]] if "signal" in cond else [])
            assert set(referred) <= set(names), (e["id"], cond)


def test_verification_placeholders_are_known() -> None:
    known = {"rank", "host", "gpu", "log", "pid", "run", "ref", "step"}
    for e in ENTRIES:
        for v in e["verification"]:
            used = set(re.findall(r"\{(\w+)\}", v["command"]))
            assert used <= known, (e["id"], v["command"], used - known)


def test_fill_template_fills_known_and_marks_unknown() -> None:
    entry = catalog.get("sdc-gradual-parameter-drift")
    commands = catalog.verification_commands(entry, {"run": "runs/a", "ref": "runs/b", "gpu": 3})
    runnable = {c.text: c.runnable for c in commands}
    assert runnable["denpex drift runs/a --ref runs/b"] is True
    assert runnable["dcgmi diag -r 3 -i 3"] is True
    # host unknown: left visible for the user, and the command is not runnable as is
    assert [r for t, r in runnable.items() if "<host>" in t] == [False]


def test_every_string_placeholder_is_one_whole_shell_word() -> None:
    # Values are shell-quoted where they are filled in; a placeholder inside a quoted
    # string of the template would put a quoted word inside quotes (or inside ssh's remote
    # command, parsed by a second shell). Only digits, which need no quoting, may be there.
    marker = "a b'c"
    for e in ENTRIES:
        for v in e["verification"]:
            names = set(re.findall(r"\{(\w+)\}", v["command"])) & {"host", "log", "run", "ref"}
            for name in names:
                filled = catalog.fill_template(v["command"], {name: marker}).text
                lexer = shlex.shlex(filled, posix=True, punctuation_chars=True)
                lexer.whitespace_split, lexer.commenters = True, ""
                assert marker in list(lexer), (e["id"], v["command"], name)


# --- signal patterns -----------------------------------------------------------------


@pytest.mark.parametrize("entry_id,signal", SIGNALS, ids=[_sid(*x) for x in SIGNALS])
def test_pattern_compiles_and_stays_within_ere(entry_id: str, signal: dict[str, Any]) -> None:
    pattern = signal["pattern"]
    compiled = re.compile(pattern)
    groups = set(compiled.groupindex)
    allowed = {"rank", "local_rank", "gpu", "host", "pid", "exitcode", "signal", "step"}
    allowed |= {"seq", "value", "ranks"}
    assert groups <= allowed, groups - allowed
    ere = _GROUP_NAME.sub("(", pattern)
    # Constructs Python accepts but POSIX ERE does not (or reads differently).
    for bad in ("(?:", "(?=", "(?!", "(?<", "*?", "+?", "??", "\\d", "\\w", "\\s", "\\b"):
        assert bad not in ere, f"{bad!r} is not POSIX ERE: {pattern}"


def test_every_signal_has_a_sample_line() -> None:
    samples = _samples()
    missing = [_sid(*x) for x in SIGNALS if _sid(*x) not in samples]
    assert missing == [], f"add sample lines to {SAMPLES_FILE.name}: {missing}"
    stale = sorted(set(samples) - {_sid(*x) for x in SIGNALS})
    assert stale == [], f"samples for signals that no longer exist: {stale}"


@pytest.fixture(scope="module")
def sample_log(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str], list[str]]:
    samples = _samples()
    keys = sorted(samples)
    path = tmp_path_factory.mktemp("catalog") / "samples.log"
    path.write_text("".join(samples[k] + "\n" for k in keys), encoding="utf-8")
    return path, keys, [samples[k] for k in keys]


@pytest.mark.skipif(shutil.which("grep") is None, reason="grep not installed")
@pytest.mark.parametrize("entry_id,signal", SIGNALS, ids=[_sid(*x) for x in SIGNALS])
def test_python_and_grep_agree_on_sample_lines(
    entry_id: str, signal: dict[str, Any], sample_log: tuple[Path, list[str], list[str]]
) -> None:
    """The signal matches its own sample, and grep -E matches exactly the lines Python does."""
    path, keys, lines = sample_log
    flags = re.IGNORECASE if signal.get("ignore_case") else 0
    compiled = re.compile(signal["pattern"], flags)
    own = _sid(entry_id, signal)
    if own in keys:  # a missing sample is reported once, by test_every_signal_has_a_sample_line
        assert compiled.search(lines[keys.index(own)]), f"{own} does not match its sample"
    by_python = {i + 1 for i, line in enumerate(lines) if compiled.search(line)}

    cmd = ["grep", "-n", "-E"] + (["-i"] if signal.get("ignore_case") else [])
    cmd += ["-e", _GROUP_NAME.sub("(", signal["pattern"]), str(path)]
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})
    assert proc.returncode in (0, 1), f"grep -E rejected {own}: {proc.stderr.strip()}"
    by_grep = {int(line.split(":", 1)[0]) for line in proc.stdout.splitlines()}
    assert by_grep == by_python, {
        "only grep": [keys[i - 1] for i in sorted(by_grep - by_python)],
        "only python": [keys[i - 1] for i in sorted(by_python - by_grep)],
    }


def test_specific_signals_do_not_match_other_entries_samples() -> None:
    """A signal weighted >= 0.8 claims its line is specific to its entry; if it matched a
    sample written for another entry, the engine would pick between them by accident."""
    samples = _samples()
    clashes = []
    for entry_id, signal in SIGNALS:
        if signal.get("weight", 0.5) < 0.8:
            continue
        compiled = re.compile(signal["pattern"], re.IGNORECASE if signal.get("ignore_case") else 0)
        for key, line in samples.items():
            if not key.startswith(entry_id + ".") and compiled.search(line):
                clashes.append((_sid(entry_id, signal), key))
    assert clashes == []


# --- rendering -----------------------------------------------------------------------

SECTIONS = [
    "## Quick answer", "## Mechanism", "## Symptoms", "## Affected systems", "## How to confirm",
    "## Fix", "## Prevention", "## Verification commands", "## Fingerprint to monitor",
    "## Log signals", "## Related", "## References",
]  # fmt: skip


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_page_has_every_section_and_holds_nothing_back(entry: dict[str, Any]) -> None:
    page = to_markdown(entry)
    assert page.startswith(f"# {entry['title']}\n")
    positions = [page.index(heading + "\n") for heading in SECTIONS]
    assert positions == sorted(positions), "sections out of order"
    # Every string of the entry (texts, commands, patterns, references) is on the page verbatim.
    for text in _strings(entry):
        assert text in page, f"{entry['id']}: not rendered: {text[:80]!r}"


def test_page_fills_verification_values_and_marks_checklist() -> None:
    entry = catalog.get("sdc-gradual-parameter-drift")
    page = to_markdown(entry, {"gpu": 5, "run": "runs/faulty", "ref": "runs/good"})
    assert "```sh\ndcgmi diag -r 3 -i 5\n```" in page
    assert "denpex drift runs/faulty --ref runs/good" in page
    assert "ssh <host>" in page
    assert "- [ ] " in page and "\n1. " in page
    assert "`sdc-transient-corruption` — " in page  # related ids are shown with their titles


def test_page_shows_the_behaviour_flags() -> None:
    killed = to_markdown(catalog.get("process-killed-signal"))
    teardown = "teardown after a launcher's report of a task's own bad exit"
    assert f"`srun_task_killed` (initiating, weight 0.6, {teardown})" in killed
    assert "Reports how a process ended, not why" in killed
    assert "Read as a hang" in to_markdown(catalog.get("nccl-timeout"))
    assert "Read as a hang" not in killed


def test_inline_code_survives_backticks() -> None:
    entry = dict(catalog.get("port-in-use"))
    entry["signals"] = [{"name": "tick", "pattern": "a`b", "role": "context"}]
    assert "``` a`b ```" not in to_markdown(entry)
    assert "`` a`b ``" in to_markdown(entry)


# --- CLI (real subprocesses) -----------------------------------------------------------


def _denpex(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "denpex", "catalog", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_cli_list_prints_aligned_columns() -> None:
    proc = _denpex()
    assert proc.returncode == 0, proc.stderr
    rows = proc.stdout.splitlines()
    assert rows[0].split() == ["ID", "CATEGORY", "TITLE"]
    listed = {row.split()[0] for row in rows[1:]}
    assert listed == set(catalog.entries())
    # Columns line up: every row's category and title start at the header's offsets.
    cat_col, title_col = rows[0].index("CATEGORY"), rows[0].index("TITLE")
    for row in rows[1:]:
        entry = catalog.get(row.split()[0])
        assert row[cat_col:].startswith(entry["category"] + " "), row
        assert row[title_col:] == entry["title"], row


def test_cli_list_json() -> None:
    proc = _denpex("--json")
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(proc.stdout)
    assert {item["id"] for item in listed} == set(catalog.entries())
    for item in listed:
        assert set(item) == {"id", "title", "category", "tags"}
        entry = catalog.get(item["id"])
        assert (item["title"], item["category"], item["tags"]) == (
            entry["title"],
            entry["category"],
            entry["tags"],
        )


def test_cli_show_prints_the_page() -> None:
    proc = _denpex("nccl-timeout")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == to_markdown(catalog.get("nccl-timeout"))
    assert "TORCH_NCCL_DESYNC_DEBUG=1" in proc.stdout


def test_cli_show_json_is_the_entry() -> None:
    proc = _denpex("checkpoint-load-error", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == catalog.get("checkpoint-load-error")


def test_cli_unknown_id_is_one_line_exit_2() -> None:
    proc = _denpex("no-such-failure")
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "no-such-failure" in proc.stderr
    assert "Traceback" not in proc.stderr
