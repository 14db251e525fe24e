"""Bounded memory of what matched: per signal a count, the rank set, the earliest hit and a
few example lines per distinct message. Hundreds of ranks repeating one error cost one
group, not hundreds of lines."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from denpex.diagnosis.matcher import Signal
from denpex.diagnosis.numbers import to_int

EXAMPLES_PER_MESSAGE = 3
MESSAGES_PER_SIGNAL = 8
TEXT_LIMIT = 400  # characters of a line kept as evidence
RANKS_WITH_FIRST_HIT = 4096

_VOLATILE = re.compile(r"0x[0-9a-fA-F]+|\d+")


@dataclass
class Hit:
    signal: Signal
    source: str
    line: int
    text: str
    rank: int | None
    ts: float | None
    seq: int  # order of arrival across all inputs
    groups: dict[str, str]
    facts: dict[str, object]
    message: str  # the text without launcher prefixes: what repeats across ranks

    def before(self, other: Hit) -> bool:
        """Earlier by timestamp when both lines carry one, else by order of arrival."""
        if self.ts is not None and other.ts is not None and self.ts != other.ts:
            return self.ts < other.ts
        return self.seq < other.seq


def message_key(message: str) -> str:
    """A message with its numbers and addresses masked: the same error on another rank."""
    return _VOLATILE.sub("#", message)[:200]


@dataclass
class MessageGroup:
    count: int = 0
    ranks: set[int] = field(default_factory=set)
    examples: list[Hit] = field(default_factory=list)


@dataclass
class SignalRecord:
    signal: Signal
    count: int = 0
    ranks: set[int] = field(default_factory=set)
    listed_ranks: set[int] = field(default_factory=set)  # from a (?P<ranks>...) group
    first: Hit | None = None
    first_by_rank: dict[int, Hit] = field(default_factory=dict)
    seq_by_rank: dict[int, int] = field(default_factory=dict)  # (?P<seq>) per reporting rank
    messages: dict[str, MessageGroup] = field(default_factory=dict)
    other_messages: int = 0
    # Files whose last hit no finite value of its key followed yet (Signal.recovers).
    unrecovered: set[str] = field(default_factory=set)

    def add(self, hit: Hit) -> None:
        self.count += 1
        if hit.rank is not None:
            self.ranks.add(hit.rank)
        listed = hit.groups.get("ranks")
        if listed:
            parsed = (to_int(r) for r in re.findall(r"\d+", listed))
            self.listed_ranks.update(r for r in parsed if r is not None)
        seq = to_int(hit.groups.get("seq"))
        if seq is not None and hit.rank is not None:
            self.seq_by_rank[hit.rank] = max(self.seq_by_rank.get(hit.rank, 0), seq)
        if self.first is None or hit.before(self.first):
            self.first = hit
        if hit.rank is not None:
            known = self.first_by_rank.get(hit.rank)
            if (known is None and len(self.first_by_rank) < RANKS_WITH_FIRST_HIT) or (
                known is not None and hit.before(known)
            ):
                self.first_by_rank[hit.rank] = hit
        key = message_key(hit.message)
        group = self.messages.get(key)
        if group is None:
            if len(self.messages) >= MESSAGES_PER_SIGNAL:
                self.other_messages += 1
                return
            group = self.messages[key] = MessageGroup()
        group.count += 1
        if hit.rank is not None:
            group.ranks.add(hit.rank)
        if len(group.examples) < EXAMPLES_PER_MESSAGE:
            group.examples.append(hit)
