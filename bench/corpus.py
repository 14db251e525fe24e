"""Measure `denpex diagnose` on the real-log corpus (tests/corpus) against two naive baselines.

Every labels file tests/corpus/labels/*.jsonl names logs copied from public issue threads
with their class, initiating rank and collateral ranks (format: tests/corpus/README.md).
Each log is diagnosed in-process, exactly as `denpex diagnose --json FILE` does
(``diagnose_paths``), and compared with its label. The same run scores two baselines:

- first-error-line: the rank on the first line matching a generic error regex
  (error|exception|traceback|fatal|killed), read from the usual rank markers;
- root-cause-table: the rank in torchelastic's "Root Cause (first observed failure)" table.

Rank figures: recall is over the logs whose label has an initiating rank (rank_determinable);
precision is right claims over the claims that can be judged (on those logs, plus naming a
labelled collateral rank on any other log, which is wrong whatever the true rank was).
Collateral recall is the mean per log of the labelled collateral ranks found.

Thread-only logs (label field ``"evidence": "thread"``: the class or rank is known only from
the issue thread, not from the log text) are not a fair target for a tool that reads the
text. They are scored on a line of their own (class right out of the thread-only logs) and
kept out of every other figure's denominator.

Split rule (fixed; never change it after the fact, it is what keeps the test split held out):
a log is in "test" when int(sha256(id), 16) is odd, else in "dev". Rules are tuned while
looking at dev only; test figures are the ones reported.

    python bench/corpus.py            # table per split and overall
    python bench/corpus.py --json     # the same figures as JSON, plus per-log results
    python bench/corpus.py --markdown # the table in docs/diagnosis.md
    python bench/corpus.py --show-misses dev   # denpex's misses on dev (never on test)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from denpex.diagnosis import diagnose_paths

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"
SPLITS = ("dev", "test")
METHODS = ("denpex", "first-error-line", "root-cause-table")


def split_of(log_id: str) -> str:
    """The fixed split rule: sha256 of the id, odd -> test, even -> dev."""
    return "test" if int(hashlib.sha256(log_id.encode()).hexdigest(), 16) % 2 else "dev"


@dataclass(frozen=True)
class Label:
    id: str
    path: Path
    source: str
    launcher: str
    cls: str  # a catalog id, or "healthy"
    initiating_rank: int | None
    collateral_ranks: tuple[int, ...]
    rank_determinable: bool
    thread_only: bool = False  # "evidence": "thread": the log text alone cannot show the label

    @property
    def split(self) -> str:
        return split_of(self.id)


@dataclass(frozen=True)
class Prediction:
    cls: str | None  # None: no finding (for denpex) or not predicted (baselines)
    initiating_rank: int | None
    collateral_ranks: tuple[int, ...] = ()


def load_labels(corpus: Path = CORPUS) -> list[Label]:
    labels: list[Label] = []
    for labels_file in sorted((corpus / "labels").glob("*.jsonl")):
        for n, line in enumerate(labels_file.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
                labels.append(
                    Label(
                        id=row["id"],
                        path=corpus / row["file"],
                        source=row["source"],
                        launcher=row["launcher"],
                        cls=row["class"],
                        initiating_rank=row["initiating_rank"],
                        collateral_ranks=tuple(row["collateral_ranks"]),
                        rank_determinable=bool(row["rank_determinable"]),
                        thread_only=_thread_only(row),
                    )
                )
            except (ValueError, KeyError, TypeError) as exc:
                raise SystemExit(f"{labels_file}:{n}: bad label: {exc}") from None
    ids = [lb.id for lb in labels]
    if len(ids) != len(set(ids)):
        raise SystemExit("duplicate ids in the labels files")
    return labels


def _thread_only(row: dict[str, Any]) -> bool:
    evidence = row.get("evidence", "log")
    if evidence not in ("log", "thread"):
        raise ValueError(f"evidence must be 'log' or 'thread', not {evidence!r}")
    return evidence == "thread"


def predict_denpex(label: Label) -> Prediction:
    findings = diagnose_paths([str(label.path)])
    if not findings:
        return Prediction(None, None)
    top = findings[0]
    return Prediction(top.id, top.initiating_rank, tuple(top.collateral_ranks))


# The markers a person grepping would read a rank from, in the order they are tried.
_RANK_MARKERS = [
    re.compile(p)
    for p in (
        r"\[rank(\d+)\]",  # torch c10d prefix
        r"\[default(\d+)\]",  # torchrun --tee
        r"\[\d+,(\d+)\]<std",  # mpirun --tag-output
        r"\[Rank (\d+)\]",  # DeepSpeed / Megatron / NCCL watchdog
        r"\brank[ =:]+(\d+)",  # "rank 3", "rank: 3", "rank=3"
        r"local_rank: (\d+)",  # torchelastic "failed (exitcode: ...) local_rank: N"
        r"^(\d+): ",  # srun -l
        r"\btask (\d+)",  # srun: error: node: task 3: Killed
    )
]
_FIRST_ERROR = re.compile(r"error|exception|traceback|fatal|killed", re.IGNORECASE)


def _rank_in(line: str) -> int | None:
    for marker in _RANK_MARKERS:
        m = marker.search(line[:4096])
        if m:
            return int(m.group(1))
    return None


def _lines(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            yield line.rstrip("\n")


def predict_first_error_line(label: Label) -> Prediction:
    for line in _lines(label.path):
        if _FIRST_ERROR.search(line[:4096]):
            return Prediction(None, _rank_in(line))
    return Prediction(None, None)


_ROOT_CAUSE = re.compile(r"Root Cause \(first observed failure\)")
_TABLE_RANK = re.compile(r"^\s*rank\s*:\s*(\d+)")


def predict_root_cause_table(label: Label) -> Prediction:
    in_table = False
    for line in _lines(label.path):
        if _ROOT_CAUSE.search(line):
            in_table = True
        elif in_table:
            m = _TABLE_RANK.search(line)
            if m:
                return Prediction(None, int(m.group(1)))
            if line.startswith("====="):
                in_table = False
    return Prediction(None, None)


PREDICTORS = {
    "denpex": predict_denpex,
    "first-error-line": predict_first_error_line,
    "root-cause-table": predict_root_cause_table,
}


@dataclass
class Scores:
    """Counts for one method on one set of logs; ratios are derived."""

    logs: int = 0
    failing: int = 0
    class_right: int = 0
    rank_logs: int = 0  # rank_determinable logs
    # Rank claims that can be judged: on rank_determinable logs, plus claims of a labelled
    # collateral rank on the other logs (wrong whatever the true rank was).
    rank_named: int = 0
    rank_right: int = 0
    collateral_as_initiating: int = 0  # any log: the named rank is a labelled collateral rank
    collateral_logs: int = 0  # logs with labelled collateral ranks
    collateral_found: float = 0.0  # sum over those logs of the fraction found
    healthy: int = 0
    healthy_alarms: int = 0
    thread_logs: int = 0  # thread-only logs: scored here only, outside every other figure
    thread_class_right: int = 0
    misses: list[str] = field(default_factory=list)

    def add(self, label: Label, pred: Prediction, with_class: bool) -> None:
        self.logs += 1
        missed: list[str] = []
        if label.thread_only:
            self.thread_logs += 1
            if pred.cls == (None if label.cls == "healthy" else label.cls):
                self.thread_class_right += 1
            elif with_class:
                self.misses.append(f"{label.id} ({label.launcher}, thread-only): class {pred.cls}")
            return
        if label.cls == "healthy":
            self.healthy += 1
            if with_class and pred.cls is not None:
                self.healthy_alarms += 1
                missed.append(f"false alarm {pred.cls}")
        else:
            self.failing += 1
            if pred.cls == label.cls:
                self.class_right += 1
            elif with_class:
                missed.append(f"class {pred.cls} != {label.cls}")
        if label.rank_determinable:
            self.rank_logs += 1
            if pred.initiating_rank is not None:
                self.rank_named += 1
            if pred.initiating_rank == label.initiating_rank:
                self.rank_right += 1
            else:
                missed.append(f"rank {pred.initiating_rank} != {label.initiating_rank}")
        if pred.initiating_rank is not None and pred.initiating_rank in label.collateral_ranks:
            self.collateral_as_initiating += 1
            if not label.rank_determinable:
                # Provably wrong even where the true rank is unknown: counts against precision.
                self.rank_named += 1
            missed.append(f"collateral rank {pred.initiating_rank} named as initiating")
        if label.collateral_ranks:
            # Averaged per log: one job with 63 Terminated tasks must not outweigh the rest.
            self.collateral_logs += 1
            found = set(label.collateral_ranks) & set(pred.collateral_ranks)
            self.collateral_found += len(found) / len(set(label.collateral_ranks))
        if missed:
            self.misses.append(f"{label.id} ({label.launcher}): " + "; ".join(missed))

    def figures(self, with_class: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "logs": self.logs,
            "rank_logs": self.rank_logs,
            "rank_recall": _ratio(self.rank_right, self.rank_logs),
            "rank_precision": _ratio(self.rank_right, self.rank_named),
            "rank_right": self.rank_right,
            "rank_named": self.rank_named,
            "collateral_as_initiating": self.collateral_as_initiating,
            "thread_logs": self.thread_logs,
        }
        if with_class:
            out |= {
                "failing_logs": self.failing,
                "class_right": self.class_right,
                "class_accuracy": _ratio(self.class_right, self.failing),
                "collateral_logs": self.collateral_logs,
                "collateral_recall": _ratio(self.collateral_found, self.collateral_logs),
                "healthy_logs": self.healthy,
                "healthy_false_alarms": self.healthy_alarms,
                "thread_class_right": self.thread_class_right,
                "thread_class_accuracy": _ratio(self.thread_class_right, self.thread_logs),
            }
        return out


def _ratio(num: float, den: int) -> float | None:
    return round(num / den, 4) if den else None


def measure(labels: Iterable[Label]) -> dict[str, Any]:
    """Figures per split ("dev", "test", "all") and method, and every log's predictions."""
    scores = {s: {m: Scores() for m in METHODS} for s in (*SPLITS, "all")}
    per_log: list[dict[str, Any]] = []
    for label in labels:
        preds = {m: PREDICTORS[m](label) for m in METHODS}
        for m, pred in preds.items():
            for s in (label.split, "all"):
                scores[s][m].add(label, pred, with_class=m == "denpex")
        per_log.append(
            {
                "id": label.id,
                "split": label.split,
                "class": label.cls,
                "initiating_rank": label.initiating_rank,
                "thread_only": label.thread_only,
                "predicted": {m: vars(p) for m, p in preds.items()},
            }
        )
    return {
        "split_rule": "test if int(sha256(id), 16) is odd, else dev",
        "splits": {
            s: {m: sc.figures(with_class=m == "denpex") for m, sc in by_method.items()}
            for s, by_method in scores.items()
        },
        "misses": {s: scores[s]["denpex"].misses for s in SPLITS},
        "logs": per_log,
    }


def _pct(num: int, den: int) -> str:
    return f"{num}/{den} ({100 * num / den:.0f}%)" if den else "–"


def table_rows(by_method: dict[str, dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """One split's figures as (row name, [denpex, first error line, root cause]) cells."""
    d, fe, rc = (by_method[m] for m in METHODS)
    recall = d["collateral_recall"]
    return [
        ("failure class right", [_pct(d["class_right"], d["failing_logs"]), "–", "–"]),
        ("initiating rank recall", [_pct(x["rank_right"], x["rank_logs"]) for x in (d, fe, rc)]),
        (
            "initiating rank precision",
            [_pct(x["rank_right"], x["rank_named"]) for x in (d, fe, rc)],
        ),
        (
            "collateral rank named as initiating",
            [str(x["collateral_as_initiating"]) for x in (d, fe, rc)],
        ),
        (
            "collateral recall (mean per log)",
            ["–" if recall is None else f"{100 * recall:.0f}% of {d['collateral_logs']}", "–", "–"],
        ),
        ("healthy false alarms", [f"{d['healthy_false_alarms']} of {d['healthy_logs']}", "–", "–"]),
        (
            "thread-only logs: class right",
            [_pct(d["thread_class_right"], d["thread_logs"]), "–", "–"],
        ),
    ]


def format_table(result: dict[str, Any]) -> str:
    out = []
    for split, by_method in result["splits"].items():
        d = by_method["denpex"]
        out.append(
            f"## {split}: {d['logs']} logs ({d['rank_logs']} with a determinable rank,"
            f" {d['thread_logs']} thread-only)"
        )
        out.append(f"{'':40} {'denpex':>14} {'first error':>14} {'root cause':>14}")
        for name, cells in table_rows(by_method):
            out.append(f"{name:40} " + " ".join(f"{c:>14}" for c in cells))
        out.append("")
    return "\n".join(out)


def format_markdown(result: dict[str, Any]) -> str:
    """The table docs/diagnosis.md shows ("Measured on real logs")."""
    out = [
        "| | split | Denpex | first error line | torchelastic Root Cause |",
        "|---|---|---|---|---|",
    ]
    for split, by_method in result["splits"].items():
        for name, cells in table_rows(by_method):
            out.append(f"| {name} | {split} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    out = ap.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print the figures as JSON")
    out.add_argument("--markdown", action="store_true", help="print the docs table")
    ap.add_argument("--corpus", type=Path, default=CORPUS, help="corpus folder (tests/corpus)")
    ap.add_argument(
        "--show-misses",
        choices=SPLITS,
        help="list denpex's misses on this split (only dev while tuning rules)",
    )
    args = ap.parse_args(argv)
    result = measure(load_labels(args.corpus))
    if args.json:
        json.dump(result, sys.stdout, indent=1)
        print()
        return 0
    if args.markdown:
        print(format_markdown(result))
        return 0
    print(format_table(result))
    if args.show_misses:
        print(f"denpex misses on {args.show_misses}:")
        for miss in result["misses"][args.show_misses]:
            print("  " + miss)
    return 0


if __name__ == "__main__":
    sys.exit(main())
