"""Across ranks, per process group: the oldest collective that did not complete, who entered
it and who did not, mismatched calls at the same sequence id; then across groups, which rank
started the hang and which ranks only waited.

Gloo dumps (torch 2.13) leave every entry "scheduled", so completion is judged by
participation: a collective every member entered, with one signature, counts as done. NCCL
dumps track states, so an entered but not completed collective is stuck too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping

from denpex.diagnosis.flight_recorder.model import Entry, RankDump, Stuck, Verdict
from denpex.finding import compress_ranks

DEFAULT_DESC = "default_pg"


def analyse(dumps: dict[int, RankDump], world_size: int | None = None) -> Verdict | None:
    """The verdict over one job's dumps (rank -> dump); None when every group is healthy."""
    world = _world(dumps, world_size)
    by_group = _collectives(dumps)
    stuck = [
        s
        for group, per_rank in sorted(by_group.items())
        if (s := _stuck(group, per_rank, dumps, world)) is not None
    ]
    if not stuck:
        return None
    absent = {r for s in stuck for r in s.missing}
    done = {s.group for s in stuck}
    for group, per_rank in sorted(by_group.items()):
        if group not in done and (s := _waited_in(group, per_rank, dumps, absent)) is not None:
            stuck.append(s)
    undumped = sorted(set(range(world)) - set(dumps))
    return _attribute(stuck, dumps, undumped)


def _world(dumps: dict[int, RankDump], hint: int | None) -> int:
    known = set(dumps)
    for d in dumps.values():
        for members in d.group_ranks.values():
            known.update(members)
    return max(max(known) + 1, hint or 0)


def _collectives(dumps: dict[int, RankDump]) -> dict[str, dict[int, dict[int, list[Entry]]]]:
    """group -> rank -> seq -> entries (a coalesced collective records several)."""
    out: dict[str, dict[int, dict[int, list[Entry]]]] = {}
    for rank, d in dumps.items():
        for e in d.entries:
            if not e.is_p2p and e.seq > 0:
                out.setdefault(e.group, {}).setdefault(rank, {}).setdefault(e.seq, []).append(e)
    return out


def _members(
    group: str, desc: str, per_rank: Mapping[int, object], dumps: dict[int, RankDump], world: int
) -> tuple[list[int], bool]:
    for d in dumps.values():
        if group in d.group_ranks:
            return sorted(d.group_ranks[group]), True
    if desc == DEFAULT_DESC:
        return list(range(world)), True
    # Gloo names no ranks for subgroups: the ranks that recorded the group are all we know.
    return sorted(per_rank), False


def _stuck(
    group: str,
    per_rank: dict[int, dict[int, list[Entry]]],
    dumps: dict[int, RankDump],
    world: int,
) -> Stuck | None:
    any_entry = next(iter(next(iter(per_rank.values())).values()))[0]
    desc = any_entry.group_desc
    members, known = _members(group, desc, per_rank, dumps, world)
    dumped = [r for r in members if r in dumps]
    undumped = [r for r in members if r not in dumps]
    # Older entries fall out of each rank's ring buffer: compare only what all still hold.
    low = max((min(seqs) for seqs in per_rank.values()), default=1)
    high = max(max(seqs) for seqs in per_rank.values())
    # The ids recorded, not range(low, high): a hostile dump's ids can be astronomically apart.
    for seq in sorted({s for seqs in per_rank.values() for s in seqs if s >= low}):
        entered = {r: per_rank[r][seq][0] for r in dumped if seq in per_rank.get(r, {})}
        missing = [r for r in dumped if r not in entered]
        mismatch, odd = _mismatch({r: per_rank[r][seq] for r in entered})
        unfinished = any(
            dumps[r].tracks_completion and e.state != "completed" for r, e in entered.items()
        )
        if missing or mismatch or unfinished:
            return Stuck(
                group, desc, seq, members, known, entered, missing, undumped, mismatch, odd
            )
    if undumped:
        # Everyone with a dump got this far; the silent ranks may be where it stopped.
        last = {r: per_rank[r][high][0] for r in dumped if high in per_rank.get(r, {})}
        return Stuck(group, desc, high, members, known, last, [], undumped)
    return None


def _waited_in(
    group: str,
    per_rank: dict[int, dict[int, list[Entry]]],
    dumps: dict[int, RankDump],
    absent: set[int],
) -> Stuck | None:
    """A group whose members the dumps do not name (gloo subgroups) cannot show who is
    missing; but if ranks absent from another stuck collective all sit in this group's last
    collective, they are waiting here, for a member that never came."""
    high = max(max(seqs) for seqs in per_rank.values())
    entered = {r: seqs[high][0] for r, seqs in per_rank.items() if high in seqs}
    desc = next(iter(entered.values())).group_desc
    members, known = _members(group, desc, per_rank, dumps, 0)
    if known:
        return None
    if not all(last_entry(dumps[r]) == e for r, e in entered.items()) or not set(entered) & absent:
        return None
    return Stuck(group, desc, high, members, False, entered, [], [])


def _mismatch(calls: dict[int, list[Entry]]) -> tuple[list[str], list[int]]:
    """Named differences between the ranks' calls at one seq id, and the minority ranks."""
    if len(calls) < 2:
        return [], []
    fields: dict[str, Callable[[list[Entry]], str]] = {
        "op": lambda es: "+".join(e.op for e in es),
        "input sizes": lambda es: str([list(s) for e in es for s in e.input_sizes]),
        "input dtypes": lambda es: str([t for e in es for t in e.input_dtypes]),
        "output sizes": lambda es: str([list(s) for e in es for s in e.output_sizes]),
        "output dtypes": lambda es: str([t for e in es for t in e.output_dtypes]),
    }
    named: list[str] = []
    odd: set[int] = set()
    for label, get in fields.items():
        values = {r: get(es) for r, es in calls.items()}
        counts = Counter(values.values())
        if len(counts) < 2:
            continue
        parts = []
        for value, _n in counts.most_common():
            ranks = [r for r, v in values.items() if v == value]
            parts.append(f"{value} on {_ranks(ranks)}")
        named.append(f"{label}: " + ", ".join(parts))
        top = counts.most_common()
        if top[0][1] > top[1][1]:  # a clear majority: the others are the odd ones out
            odd |= {r for r, v in values.items() if v != top[0][0]}
        else:
            odd |= set(values)
    return named, sorted(odd)


def _attribute(stuck: list[Stuck], dumps: dict[int, RankDump], undumped: list[int]) -> Verdict:
    """Follow the waits: a rank missing from one group's collective but itself waiting in
    another stuck collective is blocked there, not the cause."""
    waiting_in: dict[int, Stuck] = {}
    for s in stuck:
        for rank, entry in s.entered.items():
            if last_entry(dumps[rank]) == entry:
                waiting_in[rank] = s
    roots: set[int] = set()
    kind = "stall"
    for s in stuck:
        roots.update(r for r in s.missing if r not in waiting_in)
    mismatched = {r for s in stuck for r in s.odd}
    if mismatched and not roots:
        roots, kind = mismatched, "mismatch"
    if not roots:
        silent = {r for s in stuck for r in s.undumped}
        if silent:
            roots, kind = silent, "no-dump"
        else:
            kind = "not-completed"  # everyone entered, nobody finished: not a missing rank
    waiting = sorted(set(waiting_in) - roots)
    if kind == "not-completed":
        waiting = []
    ordered = sorted(roots)
    return Verdict(
        stuck=stuck,
        initiating=ordered[0] if len(ordered) == 1 else None,
        suspects=ordered if len(ordered) > 1 else [],
        waiting=waiting,
        undumped=undumped,
        kind=kind,
        dumps=dumps,
    )


def last_entry(dump: RankDump) -> Entry | None:
    """The rank's most recent collective: where it is, or was when it dumped."""
    collectives = [e for e in dump.entries if not e.is_p2p and e.seq > 0]
    return max(collectives, key=lambda e: e.record_id, default=None)


def _ranks(ranks: list[int]) -> str:
    return ("rank " if len(ranks) == 1 else "ranks ") + compress_ranks(ranks)
