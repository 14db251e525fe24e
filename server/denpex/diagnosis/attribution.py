"""Initiating versus collateral: which rank started the failure, which only reported it.

Rules (after nvidia-resiliency-ext's initiating/cascade/teardown split):
- The root is the earliest *initiating* hit (timestamps when both lines have one, else order
  of arrival). Collateral reports (watchdog timeouts, dump signals, ChildFailedError
  summaries, "may be asynchronously reported" follow-ups) never replace it.
- Within one incident (same rank, close in time) the most specific entry names it, so a
  generic "Traceback" printed just before a CUDA OOM does not win over the OOM.
- An entry whose hits all come later (within the hour, when the log has times) and from
  other ranks is the cascade: its ranks become collateral of the root. An entry on the
  root's rank, of unknown rank, or far later, stays a finding of its own, after the root.
- With only collateral evidence the finding says so: no initiating rank, the collateral
  ranks, and suspects (ranks named by a desync report, ranks that never enqueued the
  collective the others wait on, ranks missing from an otherwise complete set of reports).
"""

from __future__ import annotations

from denpex.diagnosis import launchers
from denpex.diagnosis.compose import Entry, compose, earliest, fact_str
from denpex.diagnosis.context import Topology
from denpex.diagnosis.matcher import CompiledCatalog
from denpex.diagnosis.numbers import to_int
from denpex.diagnosis.store import Hit, SignalRecord, message_key
from denpex.finding import Attribution, Finding

INCIDENT_SECONDS = 120.0
INCIDENT_LINES = 200
CASCADE_SECONDS = 3600.0
# Ranks printing the root's very error, at and above which it is theirs in common.
SHARED_RANKS = 3
# Failure categories one process meets on its own (an exception on its data, a kill). A
# diverging loss, a bad setting or checkpoint, an OOM of the same model are met by every
# replica alike: which one a launcher saw raise first says nothing (launchers.attribute).
_PER_PROCESS = frozenset({"process", "data"})


def build_findings(
    cat: CompiledCatalog, records: dict[int, SignalRecord], topo: Topology
) -> list[Finding]:
    fired = _fired_entries(cat, records, topo)
    if not fired:
        return []
    initiating = [e for e in fired if e.initiating]
    if not initiating:
        return [_collateral_only(cat, fired, topo)]
    root_hit = earliest([e.first_initiating for e in initiating if e.first_initiating])
    assert root_hit is not None
    # A dead GPU is never caused by the network errors of its peers, while the reverse is
    # the rule; and kernel and job logs rarely share a clock. So a hardware fault close to
    # the first failure is the root even when a peer's complaint was logged first.
    hardware = [
        e.first_initiating
        for e in initiating
        if cat.entries[e.id]["category"] == "hardware"
        and e.first_initiating is not None
        and _near_enough_for_hardware_root(e.first_initiating, root_hit)
    ]
    root_hit = earliest(hardware) or root_hit
    root_rank, suspects, why = _subjects(root_hit, topo)
    # A table row's rank is not trusted as the culprit, but it still groups the incident.
    incident_rank = root_rank if root_rank is not None else root_hit.rank
    # The root hit's own entry always belongs: a report printed by one rank that accuses
    # another ("[rank0]: ... ranks that caused the desync are: [7]") has no hit on the rank
    # it names.
    root = max(
        (
            e
            for e in initiating
            if e.first_initiating is root_hit or _same_incident(e, root_hit, incident_rank)
        ),
        key=lambda e: (not _exit_after(cat, e, root_hit), e.weight),
    )
    summary: launchers.Attribution | None = None
    # The same error printed by many ranks is a cause they share (a setting, a library, the
    # data), not one rank's failure: which of them printed first says nothing.
    shared = (
        _shared_ranks(records, root_hit) if why is not None and why.confidence == "high" else ()
    )
    if shared:
        root_rank, why = None, Attribution("low", f"{len(shared)} ranks report the same error")
    elif root_rank is None and not suspects:
        root_rank, suspects, why, summary = _beyond_the_line(cat, root, fired, topo)
    folded: list[Entry] = []
    separate: list[Entry] = []
    for entry in fired:
        if entry is root:
            continue
        if not entry.initiating or _same_incident(entry, root_hit, root_rank):
            folded.append(entry)
        elif (
            root_rank is not None
            and root_rank not in entry.ranks
            and entry.ranks
            and _within_cascade(entry.first_initiating, root_hit)
        ):
            folded.append(entry)  # the cascade: later, on other ranks, soon enough
        else:
            separate.append(entry)
    root_first = root.first_initiating if root.first_initiating else root_hit
    findings = [
        compose(cat, root, root_first, root_rank, suspects, folded, topo, why, summary, shared)
    ]
    separate.sort(key=lambda e: e.first_initiating.seq if e.first_initiating else 0)
    for entry in separate:
        hit = entry.first_initiating
        assert hit is not None
        rank, extra, why = _subjects(hit, topo)
        findings.append(compose(cat, entry, hit, rank, extra, [], topo, why))
    return findings


def _fired_entries(
    cat: CompiledCatalog, records: dict[int, SignalRecord], topo: Topology
) -> list[Entry]:
    by_entry: dict[str, list[SignalRecord]] = {}
    seen = {(r.signal.entry_id, r.signal.name) for r in records.values() if r.count}
    for record in records.values():
        if record.count < record.signal.min_count:
            continue  # benign when it happens once or twice (see the catalog's min_count)
        sig = record.signal
        if any((sig.entry_id, name) in seen for name in sig.benign_with):
            continue  # the log shows the program handled it (the catalog's benign_with)
        if record.signal.recovers and not record.unrecovered:
            continue  # every file's last NaN was followed by finite values: steps skipped
        by_entry.setdefault(record.signal.entry_id, []).append(record)
    out = []
    for entry_id, recs in by_entry.items():
        if not any(r.signal.role != "context" for r in recs):
            continue
        if not _conditions_hold(cat.conditions.get(entry_id, []), recs):
            continue
        e = Entry(entry_id, recs)
        e.initiating = [r for r in recs if r.signal.role == "initiating" and r.first]
        out.append(e)
    # A signal that is fallout when another entry fired (a SIGABRT after watchdog timeouts is
    # the watchdog's own abort), or after a launcher's report of a task's own bad exit (srun
    # then ends the step: Slurm's bare "CANCELLED AT", the other tasks "Killed"), stops
    # counting; an entry left without signals drops out.
    # A signal whose every hit is on a failure-table row of torchelastic's SIGKILL escalation
    # (Topology.escalated) is the agent's teardown too.
    ids = {e.id for e in out}
    bad_exit = launchers.srun_bad_exit(topo.claims)
    escalations: dict[str, tuple[set[int], int]] = {}  # per source, computed once

    def fallout(r: SignalRecord) -> bool:
        if r.signal.not_with & ids:
            return True
        first = r.first
        if first is None:
            return False
        if first.source not in escalations:
            escalations[first.source] = topo.escalated(first.source)
        escalated, rows = escalations[first.source]
        if first.line in escalated and r.count <= rows:
            return True
        return r.signal.after_bad_exit and launchers.after(bad_exit, first.source, first.line)

    kept = []
    for e in out:
        e.records = [r for r in e.records if not fallout(r)]
        e.initiating = [r for r in e.initiating if not fallout(r)]
        if any(r.signal.role != "context" for r in e.records):
            kept.append(e)
    return kept


def _conditions_hold(conditions: list[dict[str, object]], recs: list[SignalRecord]) -> bool:
    count = {r.signal.name: r.count for r in recs}
    for cond in conditions:
        kind = cond["kind"]
        if kind == "requires":
            names = cond["signals"]
            assert isinstance(names, list)
            if not all(count.get(n, 0) > 0 for n in names):
                return False
        elif kind == "min_count":
            needed = cond["count"]
            assert isinstance(needed, int)
            if count.get(str(cond["signal"]), 0) < needed:
                return False
        # value_jump needs no check here: a value signal is recorded only where it jumps, so
        # an entry with several (or with plain signals beside them) fires on any of them.
    return True


def _shared_ranks(records: dict[int, SignalRecord], hit: Hit) -> tuple[int, ...]:
    """The ranks that printed the hit's own message (numbers and addresses masked), when
    there are SHARED_RANKS of them or more; else none."""
    if hit.groups.get("ranks"):
        return ()  # a report naming culprits, not an error of its writer's own
    group = records[hit.signal.key].messages.get(message_key(hit.message))
    if group is None or len(group.ranks) < SHARED_RANKS:
        return ()
    return tuple(sorted(group.ranks))


def _subjects(hit: Hit, topo: Topology) -> tuple[int | None, list[int], Attribution | None]:
    """(the rank a hit accuses, suspects, why): a desync report names the culprits, not its
    writer."""
    where = f"{hit.source}:{hit.line}"
    listed = hit.groups.get("ranks")
    if listed:
        parsed = (to_int(r) for r in listed.replace(",", " ").split())
        ranks = sorted({r for r in parsed if r is not None})
        if len(ranks) == 1:
            return ranks[0], [], Attribution("high", f"the desync report names it ({where})")
        return None, ranks, Attribution("low", f"the desync report names these ranks ({where})")
    if hit.rank is not None and not hit.facts.get("table_row"):
        return hit.rank, [], Attribution("high", f"first failure in causal order ({where})")
    if hit.rank is not None:
        return None, [], None  # a failure table's row: weighed with the launchers' summaries
    rank = None
    if "bus" in hit.facts:
        _gpu, rank = topo.resolve_bus(fact_str(hit.facts, "host"), str(hit.facts["bus"]))
        if rank is not None:
            why = f"the failing GPU's PCI bus is this rank's in the NCCL init lines ({where})"
            return rank, [], Attribution("medium", why)
    pid = to_int(hit.groups.get("pid"))
    if pid is not None:
        rank = topo.rank_of_pid(pid)  # mapped by a file read later
        if rank is not None:
            return rank, [], Attribution("medium", f"the failing pid is this rank's ({where})")
    return None, [], None


def _beyond_the_line(
    cat: CompiledCatalog, root: Entry, fired: list[Entry], topo: Topology
) -> tuple[int | None, list[int], Attribution | None, launchers.Attribution | None]:
    """The first failure line names no rank: the same error on one rank's own line, else what
    the launchers' summaries say (weaker: see launchers.py for their traps)."""
    same = {
        r
        for rec in root.initiating
        for r, h in rec.first_by_rank.items()
        if not h.facts.get("table_row")
    }
    if len(same) == 1:
        rank = same.pop()
        why = Attribution("medium", "the same error is reported on this rank's line")
        return rank, [], why, None
    call = _launcher_call(cat, fired, topo, cat.entries[root.id]["category"] in _PER_PROCESS)
    if call.rank is not None and call.strength is not None:
        return call.rank, [], Attribution(call.strength, call.reason), call
    if call.suspects:
        return None, list(call.suspects), Attribution("low", call.reason), None
    return None, [], None, None


def _hung(cat: CompiledCatalog, fired: list[Entry]) -> bool:
    """An entry meaning "the collectives hung" fired (catalog field ``hang``): a SIGABRT is
    then the watchdog's, and a rank missing from the reports never reached the collective."""
    return any(e.id in cat.hangs for e in fired)


def _launcher_call(
    cat: CompiledCatalog, fired: list[Entry], topo: Topology, per_process: bool = True
) -> launchers.Attribution:
    hosts = set(topo.rank_host.values())
    return launchers.attribute(
        topo.claims,
        list(topo.tables.values()),
        after_timeouts=_hung(cat, fired),
        pid_rank={pid: rank for (_host, pid), rank in topo.pid_rank.items()},
        hosts=len(hosts),
        closing_pids=frozenset(topo.closing_pids),
        per_process=per_process,
    )


def _exit_after(cat: CompiledCatalog, entry: Entry, root_hit: Hit) -> bool:
    """An entry reporting how a process ended, not why, that starts after the root hit: that
    failure's exit (a rank that raised, then aborted in gloo's teardown), so it never takes
    the incident's name from it."""
    first = entry.first_initiating
    return entry.id in cat.exit_reports and first is not None and first.seq > root_hit.seq


def _near_enough_for_hardware_root(fault: Hit, first: Hit) -> bool:
    """A hardware fault close to the first failure. Without both clocks, a fault in another
    file counts as close: kernel and job logs rarely share a clock (see above)."""
    if fault.ts is not None and first.ts is not None:
        return abs(fault.ts - first.ts) <= INCIDENT_SECONDS
    return fault.source != first.source or abs(fault.line - first.line) <= INCIDENT_LINES


def _near_in_one_incident(hit: Hit, root_hit: Hit) -> bool:
    """A hit of the root's own incident. Unlike the hardware rule, without both clocks it must
    sit near the root's line in the same file: another file's line numbers say nothing of
    time, and folding a separate failure into the root would hide it."""
    if hit.ts is not None and root_hit.ts is not None:
        return abs(hit.ts - root_hit.ts) <= INCIDENT_SECONDS
    return hit.source == root_hit.source and abs(hit.line - root_hit.line) <= INCIDENT_LINES


def _within_cascade(hit: Hit | None, root_hit: Hit) -> bool:
    """Close enough after the root to be its fallout: peers notice a dead rank within their
    collective timeout (10-30 minutes by default); without timestamps, assume they do. (A
    little before counts too: a hardware root may sit on another clock, see above.)"""
    if hit is None or hit.ts is None or root_hit.ts is None:
        return True
    return -INCIDENT_SECONDS <= hit.ts - root_hit.ts <= CASCADE_SECONDS


def _same_incident(entry: Entry, root_hit: Hit, root_rank: int | None) -> bool:
    """Does ``entry`` have an initiating hit on the root's rank, close to the root hit?"""
    for record in entry.initiating:
        candidates = (
            [record.first_by_rank[root_rank]]
            if root_rank is not None and root_rank in record.first_by_rank
            else [record.first]
            if record.first is not None and record.first.rank is None
            else []
        )
        if any(_near_in_one_incident(hit, root_hit) for hit in candidates):
            return True
    return False


def _collateral_only(cat: CompiledCatalog, fired: list[Entry], topo: Topology) -> Finding:
    main = max(fired, key=lambda e: (e.weight, sum(r.count for r in e.records)))
    others = [e for e in fired if e is not main]
    reporting = set().union(*(e.ranks for e in fired))
    suspects: set[int] = set()
    for e in fired:
        for r in e.records:
            suspects |= r.listed_ranks
    # A rank whose last enqueued collective is below the one the others wait on never joined.
    waiting_on = max(
        (s for e in fired for r in e.records for s in r.seq_by_rank.values()), default=0
    )
    for behind, (enqueued, _done) in topo.progress.items():
        if waiting_on and enqueued < waiting_on:
            suspects.add(behind)
    world = topo.world_size or (max(topo.ranks_seen) + 1 if topo.ranks_seen else 0)
    # A rank missing from the others' hang reports never reached the collective; without hang
    # reports (a failure table's one row, say) the others being absent says nothing.
    if world and _hung(cat, fired) and len(reporting) * 2 >= world:
        missing = set(range(world)) - reporting
        if 0 < len(missing) <= max(1, world // 4):
            suspects |= missing
    why = None
    rank: int | None = None
    summary: launchers.Attribution | None = None
    if suspects:
        why = Attribution(
            "low", "named by the reports or missing from them; no line shows the failure"
        )
    else:
        # Only downstream lines. Without hang reports they are the launcher's teardown of the
        # rank its summary names; after timeouts that rank may have only noticed the hang.
        call = _launcher_call(cat, fired, topo)
        if call.rank is not None and call.strength is not None and not _hung(cat, fired):
            rank, why, summary = call.rank, Attribution(call.strength, call.reason), call
        else:
            # A rank that reported the hang itself noticed it; it is no suspect.
            named = {call.rank} if call.rank is not None else set(call.suspects)
            if named - reporting:
                suspects.update(named - reporting)
                why = Attribution("low", call.reason)
    first = earliest([r.first for e in fired for r in e.records])
    assert first is not None
    return compose(cat, main, first, rank, sorted(suspects), others, topo, why, summary)
