"""Which rank wrote a line: launcher prefixes, in-message markers, per-rank file names.

Launchers prefix lines with the *global* rank (srun -l task id, mpirun, PyTorch's
``[rankN]:``) or the *local* rank (torchrun's ``[defaultN]:``, i.e. role name + local rank).
On a nested prefix such as ``[default3]:[rank11]:`` the innermost global marker wins.
"""

from __future__ import annotations

import re
from pathlib import PurePath

from denpex.diagnosis.numbers import to_int

# Prefixes at the start of a line, peeled off one after the other.
_PREFIXES = (
    # torchrun --tee / PyTorch c10d logger: "[rank3]:", "[default3]:", "[trainer3]:"
    re.compile(r"\[(?P<kind>rank|default|trainer|worker)(?P<rank>\d+)\]:\s?"),
    # mpirun --tag-output: "[1,3]<stderr>:"
    re.compile(r"\[\d+,(?P<rank>\d+)\]<(?:stdout|stderr)>:\s?"),
    # horovodrun's gloo launcher: "[3]<stderr>:"
    re.compile(r"\[(?P<rank>\d{1,6})\]<(?:stdout|stderr)>:\s?"),
    # srun -l / --label: "3: "
    re.compile(r"\s{0,4}(?P<rank>\d{1,6}): "),
    # ServiceNow's training toolkit, behind a time: "(worker_7) : "
    re.compile(r"\((?P<kind>worker)_(?P<rank>\d{1,6})\) : "),
    # a host and rank in one bracket: "[node-a:3]:"
    re.compile(r"\[[A-Za-z0-9][\w.-]{0,252}:(?P<rank>\d{1,6})\]:\s?"),
    # Prefixes that name no rank but hide the one behind them. pdsh (DeepSpeed multi-node)
    # and log shippers put a host, pod or time first: "10.0.0.3: [rank19]:",
    # "node-a: [rank3]:", "[pod/trainer-0/pytorch] ", "2024-03-05T07:01:51.123Z [rank3]:".
    # A bare "name: " is peeled only before a rank prefix: "RuntimeError: " is not a host.
    re.compile(r"(?:\d{1,3}\.){3}\d{1,3}: "),
    # (anchored: matched at the line's start only, it must not be retried at every offset)
    # NeMo-run and TorchX put the role and replica first, with no colon: "i.pretrain/0 ".
    re.compile(
        r"^[A-Za-z0-9][\w./-]{0,252}:? (?=\[(?:rank|default|trainer|worker)\d|\[\d+,\d+\]<)"
    ),
    re.compile(r"\[pod/[^\]\s]{1,300}\] "),
    # Determined AI's trial logs: "[2022-06-09T09:22:31.405197Z] 8de2ca81 || " (container id).
    re.compile(r"\[\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z\] [0-9a-f]{8} \|\| "),
    # Ray names the actor a line came from: "(SGLangEngine pid=45268) [rank7]:".
    re.compile(
        r"\([A-Za-z_]\w{0,100} pid=\d{1,10}(?:, ip=[\d.]{7,15})?\) "
        r"(?=\[(?:rank|default|trainer|worker)\d|\[\d+,\d+\]<)"
    ),
    # mpirun --timestamp-output puts a ctime first, with no space before its rank tag:
    # "Fri Aug 11 12:31:45 2023[1,0]<stdout>:".
    re.compile(r"[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}(?=\[\d+,\d+\]<)"),
    re.compile(
        r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d{1,9})?(?:Z|[+-]\d\d:?\d\d)? {1,4}"
        r"(?=\[(?:rank|default|trainer|worker)\d|\[\d+,\d+\]<|\[pod/|\(worker_\d)"
    ),
)
# Launchers nest two or three prefixes; a line of thousands of them is not a rank's line, and
# peeling each would copy the line each time.
_MAX_PREFIXES = 8
# Markers inside a message, used only when no prefix named the rank. "[Rank 3]" (DeepSpeed,
# Megatron), "[PG ID 0 PG GUID 0(default_pg) Rank 3]" (ProcessGroupNCCL; only the default
# group's rank is the global one), "rank 3:" at the start of a message.
_IN_MESSAGE = (
    re.compile(r"\[Rank (?P<rank>\d+)\]"),
    re.compile(r"\[PG ID 0 [^\[\]]*?\bRank (?P<rank>\d+)\]"),  # stops at the next "[": linear
    re.compile(r"^(?:\S+ )?[Rr]ank (?P<rank>\d+)(?::|\]| \|)"),
)
# The rank token must end the name (before extensions): "train_rank3.log", "worker-3.out",
# "rank_3.log.1"; a directory "rank-3/" counts too.
_FILE_RANK = re.compile(
    r"(?:^|[-_.])(?:rank|worker|proc|task)[-_.]?(\d+)(?:\.[A-Za-z0-9]+)*$", re.IGNORECASE
)


def split_prefix(text: str) -> tuple[int | None, str]:
    """(rank from launcher prefixes, the line with those prefixes removed)."""
    rank: int | None = None
    local: int | None = None
    for _ in range(_MAX_PREFIXES):
        for rx in _PREFIXES:
            m = rx.match(text)
            if m:
                if "rank" not in rx.groupindex:
                    text = text[m.end() :]  # a host, pod or time: peeled, no rank
                    break
                value = to_int(m.group("rank"))
                if value is None:
                    pass  # not a number: the prefix is peeled, the rank stays unknown
                elif m.groupdict().get("kind") in ("default", "trainer", "worker"):
                    local = value
                else:
                    rank = value
                text = text[m.end() :]
                break
        else:
            break
    return (rank if rank is not None else local), text


def message_rank(text: str) -> int | None:
    for rx in _IN_MESSAGE:
        m = rx.search(text)
        if m:
            return to_int(m.group("rank"))
    return None


def file_rank(source: str) -> int | None:
    """rank_3.log, rank3.log, worker-3.out, logs/rank-3/stdout.log -> 3; else None."""
    for part in reversed(PurePath(source).parts[-2:]):
        m = _FILE_RANK.search(part)
        if m:
            return to_int(m.group(1))
    return None
