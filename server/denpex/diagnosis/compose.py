"""A finding from the root that attribution chose: where it ran, its evidence, its confidence
and the story that ties them together. Attribution (``attribution``) decides which entry is
the root and which ranks are collateral; this module only writes the result down.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from denpex import catalog
from denpex.diagnosis import launchers
from denpex.diagnosis.context import Topology
from denpex.diagnosis.matcher import CompiledCatalog
from denpex.diagnosis.numbers import to_int
from denpex.diagnosis.store import Hit, SignalRecord
from denpex.finding import Attribution, Evidence, Finding, Role, compress_ranks, host_gpu

_ROLE_ORDER: dict[str, int] = {"initiating": 0, "collateral": 1, "context": 2}
EVIDENCE_LIMIT = 12


@dataclass
class Entry:
    """A catalog entry that fired: its signal records, the initiating ones apart."""

    id: str
    records: list[SignalRecord]
    initiating: list[SignalRecord] = field(default_factory=list)

    @property
    def first_initiating(self) -> Hit | None:
        hits = [r.first for r in self.initiating if r.first is not None]
        return earliest(hits)

    @property
    def weight(self) -> float:
        return max(r.signal.weight for r in (self.initiating or self.records))

    @property
    def ranks(self) -> set[int]:
        return set().union(*(r.ranks for r in self.records))


def earliest(hits: Sequence[Hit | None]) -> Hit | None:
    best: Hit | None = None
    for hit in hits:
        if hit is not None and (best is None or hit.before(best)):
            best = hit
    return best


def fact_str(facts: dict[str, object], key: str) -> str | None:
    value = facts.get(key)
    return value if isinstance(value, str) else None


def fact_int(facts: dict[str, object], key: str) -> int | None:
    value = facts.get(key)
    return value if isinstance(value, int) else None


def _place(rank: int | None, hit: Hit, topo: Topology) -> tuple[str | None, int | None, int | None]:
    """(host, gpu, pid) of the initiating rank, from the line itself, then the topology."""
    facts = hit.facts
    host = fact_str(facts, "host")
    gpu = fact_int(facts, "gpu")
    pid = fact_int(facts, "pid")
    groups = hit.groups
    if host is None and groups.get("host"):
        host = groups["host"]
    if gpu is None:
        gpu = to_int(groups.get("gpu"))
    if pid is None:
        pid = to_int(groups.get("pid"))
    if "bus" in facts and gpu is None:
        gpu, _ = topo.resolve_bus(host, str(facts["bus"]))
    if rank is not None:
        host = host or topo.rank_host.get(rank)
        gpu = gpu if gpu is not None else topo.rank_gpu.get(rank)
        pid = pid if pid is not None else topo.rank_pid.get(rank)
    return host, gpu, pid


def compose(
    cat: CompiledCatalog,
    entry: Entry,
    first: Hit,
    rank: int | None,
    suspects: list[int],
    folded: list[Entry],
    topo: Topology,
    why: Attribution | None,
    summary: launchers.Attribution | None = None,
    shared: tuple[int, ...] = (),
) -> Finding:
    """``summary``: the launchers' call that named ``rank``; its line (the only one that shows
    the failure when the rank died silently) is shown as the initiating evidence, and the
    workers the launcher tore down after it are collateral."""
    spec = cat.entries[entry.id]
    host, gpu, pid = _place(rank, first, topo)
    all_ranks = entry.ranks.union(*(e.ranks for e in folded))
    all_ranks |= set(summary.teardown) if summary is not None else set()
    # ``shared``: ranks that printed the root's very error, theirs in common: not fallout.
    collateral = sorted(all_ranks - {rank} - set(suspects) - set(shared))
    evidence = _evidence(entry, folded, rank, first)
    for ev in evidence:
        if summary is not None and summary.line == (ev.source, ev.line):
            ev.role = "initiating"
    evidence.sort(key=lambda ev: ev.role != "initiating")  # stable: time order otherwise
    values: dict[str, object] = {
        "rank": rank,
        "host": host,
        "gpu": gpu,
        "pid": pid,
        "log": first.source,
        "step": first.groups.get("step"),
    }
    if rank is None and len(suspects) == 1:
        values["rank"] = suspects[0]
    commands = catalog.verification_commands(spec, values)
    return Finding(
        id=entry.id,
        title=spec["title"],
        category=spec["category"],
        confidence=_confidence(entry, rank, suspects, folded),
        initiating_rank=rank,
        collateral_ranks=collateral,
        suspect_ranks=sorted(suspects),
        host=host,
        gpu=gpu,
        evidence=evidence,
        root_cause=_story(spec, entry, first, rank, host, gpu, collateral, suspects, why, shared),
        fix="\n".join(f"{i}. {step}" for i, step in enumerate(spec["fix"], 1)),
        verification=[c.text for c in commands],
        related=list(spec.get("related", [])),
        verification_runnable=[c.runnable for c in commands],
        attribution=why,
    )


def _confidence(entry: Entry, rank: int | None, suspects: list[int], folded: list[Entry]) -> float:
    if entry.initiating:
        score = 0.45 + 0.4 * entry.weight + (0.1 if rank is not None else 0.0)
        score += 0.05 if folded else 0.0
    else:
        score = 0.25 + 0.3 * entry.weight + (0.1 if suspects else 0.0)
    return round(min(score, 0.98), 2)


def _evidence(entry: Entry, folded: list[Entry], rank: int | None, first: Hit) -> list[Evidence]:
    """The first line, a few lines per distinct message of the entry, one per message of the
    folded entries (their own context lines left out), at most EVIDENCE_LIMIT lines, each
    source line once; initiating lines first to keep, shown initiating first, then in time order."""
    picked: list[tuple[Hit, Role]] = [(first, first.signal.role)]
    seen = {(first.source, first.line)}

    def take(record: SignalRecord, role: Role, per_message: int) -> None:
        for group in record.messages.values():
            for hit in group.examples[:per_message]:
                if (hit.source, hit.line) not in seen:
                    seen.add((hit.source, hit.line))
                    picked.append((hit, role))

    for record in sorted(entry.records, key=lambda r: _ROLE_ORDER[r.signal.role]):
        take(record, record.signal.role, 2)
    for other in folded:
        for record in other.records:
            if record.signal.role == "context":
                continue
            role: Role = "collateral"
            if record.signal.role == "initiating" and rank is not None and record.ranks == {rank}:
                role = "context"  # a follow-up on the same rank
            take(record, role, 1)
    picked.sort(key=lambda item: (_ROLE_ORDER[item[1]], _when(item[0])))
    # The initiating line opens the list (every consumer shows this order), the rest follow
    # in time order: a collateral report stamped earlier must not read as the first failure.
    kept = sorted(
        picked[:EVIDENCE_LIMIT], key=lambda item: (item[1] != "initiating", _when(item[0]))
    )
    return [Evidence(h.source, h.line, h.text, h.rank, role) for h, role in kept]


def _when(hit: Hit) -> tuple[float, int]:
    return (hit.ts if hit.ts is not None else float("inf"), hit.seq)


def _story(
    spec: catalog.Entry,
    entry: Entry,
    first: Hit,
    rank: int | None,
    host: str | None,
    gpu: int | None,
    collateral: list[int],
    suspects: list[int],
    why: Attribution | None,
    shared: tuple[int, ...] = (),
) -> str:
    where = f"{first.source}:{first.line}"
    where_ran = host_gpu(host, gpu)
    if entry.initiating and rank is not None:
        who = f"Rank {rank}" + (f" ({where_ran})" if where_ran else "")
        story = f"{who} failed first ({where})."
    elif entry.initiating:
        story = f"First seen at {where}" + (f" ({where_ran})" if where_ran else "") + "."
        if suspects:
            story += f" The log names ranks {compress_ranks(suspects)}."
    else:
        story = (
            f"Only downstream reports were found (first at {where}); "
            "no line shows the failure itself."
        )
        if suspects:
            story += f" Suspect ranks: {compress_ranks(suspects)}."
        elif rank is not None:
            story += f" The first to fail was rank {rank}."
    if why is not None and why.confidence != "high":
        story += f" Rank attribution: {why.confidence} confidence, {why.reason}."
    if shared:
        story += (
            f" Ranks {compress_ranks(list(shared))} printed this same error themselves: a "
            "cause they share (a setting, a library, the data), not one rank's failure."
        )
    if collateral:
        story += f" Ranks {compress_ranks(collateral)} only reported the fallout."
    return f"{story} {spec['quick_answer']}"
