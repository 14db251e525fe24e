"""Dump verdicts as findings, merged with what the log says.

One diagnosis: a verdict from the dumps outranks the log's timeout reports (every waiting rank
times out; the dumps say who never came). Log findings on the ranks the dumps show waiting,
or on no rank, fold into it as collateral evidence; a log finding on the culprit's rank (an
OOM, an exception) is the reason it never came, so it joins as the finding's cause.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from denpex import catalog
from denpex.diagnosis.flight_recorder.analysis import analyse, last_entry
from denpex.diagnosis.flight_recorder.model import Entry, Frame, RankDump, Stuck, Verdict
from denpex.finding import Attribution, Evidence, Finding, Role, compress_ranks

STALL_ID = "rank-stall-before-collective"
MISMATCH_ID = "collective-mismatch"
TIMEOUT_ID = "nccl-timeout"
_IDS = {"stall": STALL_ID, "no-dump": STALL_ID, "mismatch": MISMATCH_ID}
STACK_FRAMES = 4
_DUMP_COMMANDS = (
    "TORCH_NCCL_DESYNC_DEBUG=1 TORCH_DISTRIBUTED_DEBUG=DETAIL <your usual launch command>",
    "python -m torch.distributed.flight_recorder.fr_trace {dumps} -p {prefix} "
    "--allow-incomplete-ranks",
)
# Log findings that only describe the wait (or its teardown): the dumps explain them.
_WAIT_CATEGORIES = {"communication", "launcher"}
# A culprit's own "exception" can be its wait timing out too (gloo raises one in the waiting
# call): that is no cause. Searched in evidence lines, which the log store keeps short.
_WAIT_TEXT = re.compile(
    r"timed out|timeout|watchdog|connection closed by peer|connection reset", re.I
)


@dataclass
class DumpSet:
    """The dumps of one diagnose call, by prefix (one job's dumps share one)."""

    by_prefix: dict[str, dict[int, RankDump]] = field(default_factory=dict)

    def add(self, dump: RankDump) -> str | None:
        """Keep a dump; a notice when its prefix already has that rank."""
        ranks = self.by_prefix.setdefault(dump.prefix, {})
        if dump.rank in ranks:
            first = ranks[dump.rank].path
            return f"{dump.path}: skipped, a second dump for rank {dump.rank} ({first})"
        ranks[dump.rank] = dump
        return None

    def __len__(self) -> int:
        return sum(len(r) for r in self.by_prefix.values())

    def verdicts(self, world_size: int | None) -> list[Verdict]:
        out = []
        for _prefix, dumps in sorted(self.by_prefix.items()):
            verdict = analyse(dumps, world_size)
            if verdict is not None:
                out.append(verdict)
        return out


def merge_findings(
    log_findings: list[Finding],
    dumps: DumpSet,
    world_size: int | None,
    rank_host: Mapping[int, str],
    rank_gpu: Mapping[int, int],
) -> list[Finding]:
    out: list[Finding] = []
    rest = list(log_findings)
    for verdict in dumps.verdicts(world_size):
        finding = verdict_finding(verdict, rank_host, rank_gpu)
        merged, rest = merge_verdict(rest, finding, verdict.waiting)
        out.append(merged)
    return out + rest


def merge_verdict(
    log_findings: list[Finding], finding: Finding, waiting: list[int]
) -> tuple[Finding, list[Finding]]:
    """One dump finding with the log's findings: (the merged finding, the log findings it
    does not explain). ``waiting`` are the ranks the dumps show blocked in a collective."""
    culprits = (
        {finding.initiating_rank}
        if finding.initiating_rank is not None
        else set(finding.suspect_ranks)
    )
    rest = list(log_findings)
    cause = next(
        (
            f
            for f in rest
            if f.initiating_rank in culprits
            and f.category not in _WAIT_CATEGORIES
            and not _only_waited(f)
        ),
        None,
    )
    if cause is not None:
        rest.remove(cause)
        finding = _with_cause(finding, cause)
    folded = [f for f in rest if _explained(f, set(waiting), culprits)]
    for f in folded:
        rest.remove(f)
        # What each waiting rank said (its timeout report) first, then the finding's own
        # initiating lines: a launcher's summary line may lead a log finding without a rank.
        reports = sorted(
            (e for e in f.evidence if e.role != "context"),
            key=lambda e: (not _WAIT_TEXT.search(e.text), e.role != "initiating"),
        )
        finding.evidence.extend(
            Evidence(e.source, e.line, e.text, e.rank, "collateral") for e in reports[:2]
        )
        finding.collateral_ranks = sorted(
            (set(finding.collateral_ranks) | set(f.collateral_ranks) | _ranks_of(f)) - culprits
        )
        if f.id not in finding.related and f.id != finding.id:
            finding.related.append(f.id)
    return finding, rest


def _only_waited(f: Finding) -> bool:
    lines = [e.text for e in f.evidence if e.role == "initiating"]
    return bool(lines) and all(_WAIT_TEXT.search(text) for text in lines)


def _ranks_of(f: Finding) -> set[int]:
    return {f.initiating_rank} if f.initiating_rank is not None else set()


def _explained(f: Finding, waiting: set[int], culprits: set[int]) -> bool:
    """A log finding the hang explains: a report from a waiting rank, or only collateral."""
    if f.initiating_rank is None:
        return (
            f.category in _WAIT_CATEGORIES
            or not f.suspect_ranks
            or set(f.suspect_ranks) <= (culprits | waiting)
        )
    if f.initiating_rank in culprits:
        return _only_waited(f)
    return f.initiating_rank in waiting


def _with_cause(dump: Finding, cause: Finding) -> Finding:
    """The culprit's own failure from the log, carrying the dumps' attribution."""
    cause.collateral_ranks = sorted(set(cause.collateral_ranks) | set(dump.collateral_ranks))
    cause.suspect_ranks = []
    cause.evidence = cause.evidence + [e for e in dump.evidence if e.rank == cause.initiating_rank]
    cause.evidence += [e for e in dump.evidence if e.rank != cause.initiating_rank][:4]
    cause.root_cause = f"{dump.root_cause}\n{cause.root_cause}"
    for command, runnable in zip(dump.verification, dump.verification_runnable, strict=True):
        if command not in cause.verification:
            cause.verification.append(command)
            cause.verification_runnable.append(runnable)
    cause.confidence = max(cause.confidence, dump.confidence)
    if dump.id not in cause.related and dump.id != cause.id:
        cause.related.insert(0, dump.id)
    cause.host = cause.host or dump.host
    cause.gpu = cause.gpu if cause.gpu is not None else dump.gpu
    cause.attribution = dump.attribution or cause.attribution
    return cause


def verdict_finding(
    verdict: Verdict, rank_host: Mapping[int, str], rank_gpu: Mapping[int, int]
) -> Finding:
    entry_id = _IDS.get(verdict.kind, TIMEOUT_ID)
    spec = catalog.get(entry_id)
    rank = verdict.initiating
    host = rank_host.get(rank) if rank is not None else None
    gpu = rank_gpu.get(rank) if rank is not None else None
    culprits = [rank] if rank is not None else verdict.suspects
    collateral = sorted(set(verdict.waiting) - set(culprits))
    any_dump = next(iter(verdict.dumps.values()))
    directory, prefix = os.path.split(any_dump.prefix)
    values = {"rank": rank, "host": host, "dumps": directory or ".", "prefix": prefix}
    # fill_template shell-quotes each value and says whether the command can run as shown.
    commands = [catalog.fill_template(t, values) for t in _DUMP_COMMANDS]
    commands += [
        c
        for c in catalog.verification_commands(spec, values)
        if c.text not in {d.text for d in commands}
        and not re.search(r"<(log|pid|dump dir)>", c.text)
    ]
    return Finding(
        id=entry_id,
        title=spec["title"],
        category=spec["category"],
        confidence=0.9 if rank is not None else 0.6,
        initiating_rank=rank,
        collateral_ranks=collateral,
        suspect_ranks=verdict.suspects,
        host=host,
        gpu=gpu,
        evidence=_evidence(verdict, culprits),
        root_cause=f"{_story(verdict, host)} {spec['quick_answer'].strip()}",
        fix="\n".join(f"{i}. {step}" for i, step in enumerate(spec["fix"], 1)),
        verification=[c.text for c in commands],
        verification_runnable=[c.runnable for c in commands],
        related=[r for r in spec.get("related", []) if r != entry_id],
        attribution=(
            Attribution("high", "the Flight Recorder dumps show where it left the others")
            if rank is not None
            else Attribution("low", "the Flight Recorder dumps narrow it to these ranks")
            if verdict.suspects
            else None
        ),
    )


def _ranks(ranks: list[int]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + compress_ranks(ranks)


def _group_of(e: Entry) -> str:
    # Gloo sub-groups carry the description "undefined": their name says more.
    return e.group_desc if e.group_desc not in ("", "undefined") else f"group {e.group}"


def _call(e: Entry) -> str:
    return f"{e.op} #{e.seq}"


def _group(s: Stuck) -> str:
    name = s.group_desc if s.group_desc not in ("", "undefined") else f"group {s.group}"
    members = f"ranks {compress_ranks(s.members)}" if s.members_known else "ranks not in the dumps"
    return f"{name} ({members})"


def _story(v: Verdict, host: str | None) -> str:
    backends = sorted({d.backend for d in v.dumps.values() if d.backend})
    versions = sorted({d.version for d in v.dumps.values()})
    parts = [
        f"Flight Recorder dumps of {len(v.dumps)} rank(s) ({'/'.join(backends) or 'no entries'}, "
        f"format {'/'.join(versions)})."
    ]
    for s in v.stuck:
        entered = sorted(s.entered)
        call = _call(s.entered[entered[0]]) if entered else f"collective #{s.seq}"
        text = f"On {_group(s)} the oldest unfinished collective is {call}:"
        if entered:
            text += f" {_ranks(entered)} entered it"
        if s.missing:
            text += f", {_ranks(s.missing)} never did"
        if s.mismatch:
            text += f"; the calls differ at seq {s.seq}: " + "; ".join(s.mismatch)
        parts.append(text + ".")
    culprits = [v.initiating] if v.initiating is not None else v.suspects
    for r in culprits:
        where = f" (host {host})" if host and r == v.initiating else ""
        dump = v.dumps.get(r)
        if dump is None:
            parts.append(f"Rank {r}{where} left no dump: dead, or hung before dumping.")
            continue
        last = last_entry(dump)
        frame = last.user_frame() if last else None
        if last is None:
            parts.append(f"Rank {r}{where} recorded no collective.")
        else:
            at = f" at {frame}" if frame else ""
            group = _group_of(last)
            parts.append(f"Rank {r}{where}: last collective {_call(last)} on {group}{at}.")
    parts.append(_where_each_rank_is(v))
    silent = [r for r in v.undumped if r not in culprits]
    if silent:
        parts.append(f"{_ranks(silent).capitalize()} left no dump: dead, or hung before dumping.")
    if v.waiting:
        parts.append(f"{_ranks(v.waiting).capitalize()} only waited.")
    return " ".join(parts)


def _where_each_rank_is(v: Verdict) -> str:
    """Ranks grouped by their last collective: one clause per distinct place, so 512 ranks
    waiting in one all_reduce read as one clause."""
    places: dict[str, list[int]] = {}
    for rank, dump in v.dumps.items():
        last = last_entry(dump)
        place = f"{_call(last)} on {_group_of(last)}" if last else "no collective"
        places.setdefault(place, []).append(rank)
    clauses = [
        f"{_ranks(sorted(ranks))} last entered {place}"
        for place, ranks in sorted(places.items(), key=lambda item: min(item[1]))
    ]
    return "Where each rank is: " + "; ".join(clauses) + "."


def _evidence(v: Verdict, culprits: list[int]) -> list[Evidence]:
    """One line per dumped rank: where it stopped; the culprits' stacks first."""
    out: list[Evidence] = []
    for rank in sorted(v.dumps, key=lambda r: (r not in culprits, r)):
        dump = v.dumps[rank]
        last = last_entry(dump)
        role: Role = (
            "initiating" if rank in culprits else "collateral" if rank in v.waiting else "context"
        )
        if last is None:
            text = f"rank {rank}: no collective recorded"
        else:
            stack = " <- ".join(_short(f) for f in _user_frames(last))
            text = (
                f"rank {rank}: last collective {_call(last)} on {_group_of(last)}"
                + (f" at {stack}" if stack else "")
                + f" ({last.state or '?'}, {[list(s) for s in last.input_sizes]} "
                f"{'/'.join(last.input_dtypes) or '?'})"
            )
        out.append(Evidence(dump.path, 1, text, rank, role))
    return out


def _short(f: Frame) -> str:
    """The frame with its file's last two path parts: an evidence line stays readable."""
    parts = f.filename.replace("\\", "/").rsplit("/", 2)
    return f"{'/'.join(parts[-2:])}:{f.line} in {f.name}"


def _user_frames(e: Entry) -> list[Frame]:
    frames = [f for f in e.frames if "/torch/" not in f.filename.replace("\\", "/")]
    return list((frames or list(e.frames))[:STACK_FRAMES])
