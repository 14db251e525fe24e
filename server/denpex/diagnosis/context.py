"""What a log says about the job's layout: world size, which pid/host/GPU each rank is.

These lines are not failures; they let a failure line without a rank marker (an NCCL WARN
carrying only ``host:pid:tid [dev]``, a kernel Xid naming a PCI bus, a torchelastic table
row) be pinned to a rank, and a rank to its host and GPU.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime

from denpex.diagnosis import launchers
from denpex.diagnosis.launchers import Claim, RootCauseTable
from denpex.diagnosis.numbers import to_int

# Extractors screened like signals (keys -1, -2, ...), run only on lines holding their anchor.
_EXTRACTORS: dict[str, tuple[list[str], re.Pattern[str]]] = {
    "world_size": (
        ["WORLD_SIZE", "world_size", "world size", "nranks", "num_processes"],
        re.compile(
            r"(?:WORLD_SIZE|world_size|world size|num_processes)['\"]?\s*(?:[=:]\s*)?(?P<n>\d+)"
            r"|nranks (?P<n2>\d+)"
        ),
    ),
    # NCCL init: "node-a:1234:1290 [3] NCCL INFO comm 0x.. rank 3 nranks 8 cudaDev 3
    # nvmlDev 3 busId 1b000 commId 0x.. - Init COMPLETE"
    "nccl_init": (
        ["cudaDev"],
        re.compile(
            r"\brank (?P<rank>\d+) nranks (?P<n>\d+) cudaDev (?P<dev>\d+)"
            r"(?: nvmlDev \d+)? busId (?P<bus>[0-9a-fA-F]+)"
        ),
    ),
    # torchelastic failure table rows
    "table_host": (["host"], re.compile(r"^\s*host\s*: (?P<host>\S+)\s*$")),
    "table_rank": (
        ["local_rank: "],
        re.compile(r"^\s*rank\s*: (?P<rank>\d+) \(local_rank: (?P<local>\d+)\)"),
    ),
    "table_exit": (
        ["exitcode"],
        re.compile(r"^\s*exitcode\s*: (?P<code>-?\d+) \(pid: (?P<pid>\d+)\)"),
    ),
    "table_time": (["time      : "], re.compile(r"^\s*time\s*: (?P<t>\S{1,40})\s*$")),
    "root_cause": (["Root Cause"], re.compile(r"Root Cause \(first observed failure\)")),
    "no_other_failures": (["<NO_OTHER_FAILURES>"], re.compile(r"<NO_OTHER_FAILURES>")),
    # "[Rank 3] Timeout at NCCL work: 183, last enqueued NCCL work: 183, last completed..."
    "progress": (
        ["last enqueued"],
        re.compile(
            r"last enqueued (?:NCCL )?work: (?P<enq>-?\d+), "
            r"last completed (?:NCCL )?work: (?P<done>-?\d+)"
        ),
    ),
    **launchers.PATTERNS,
}
EXTRACTOR_NAMES = list(_EXTRACTORS)
EXTRACTOR_LITERALS: dict[str, set[int]] = {}
for _i, (_name, (_lits, _rx)) in enumerate(_EXTRACTORS.items()):
    for _lit in _lits:
        EXTRACTOR_LITERALS.setdefault(_lit, set()).add(-1 - _i)


def extractor(key: int) -> tuple[str, re.Pattern[str]]:
    name = EXTRACTOR_NAMES[-1 - key]
    return name, _EXTRACTORS[name][1]


# Read off any line that reached the slow path.
# The look-behind starts the host only where a name starts: tried inside a long run of name
# characters, the pattern would rescan the rest of the run from each of them.
NCCL_PREFIX = re.compile(
    r"(?<![\w.-])(?P<host>[A-Za-z0-9][\w.-]*):(?P<pid>\d+):\d+ \[(?P<dev>\d+)\] NCCL"
)
_CUDA_DEVICE = re.compile(r"\bcuda:(?P<gpu>\d+)|\bGPU (?P<gpu2>\d+) has a total capacity")
_XID = re.compile(r"Xid \(PCI:(?P<pci>[0-9a-fA-F:.]+)\)")
_SYSLOG_HOST = re.compile(
    r"^(?:[A-Z][a-z]{2} {1,2}\d{1,2} \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\S+) (?P<host>[\w.-]+) kernel:"
)
# Table rows carry the rank only on their "rank :" row; rows this close after it inherit it.
_TABLE_SPAN = 4
# torchelastic's agent SIGKILLs workers 30 s after its SIGTERM; its table stamps whole seconds.
ESCALATION = 29.0


def _table_stamp(text: str) -> datetime | None:
    """A failure table's ``time : 2024-03-05_07:01:51``."""
    try:
        return datetime.strptime(text, "%Y-%m-%d_%H:%M:%S")
    except ValueError:
        return None


def _bus(text: str) -> str:
    """PCI "0000:3B:00.0" and NCCL busId "3b000" to one form: "3b:00"."""
    t = text.lower()
    if ":" in t:
        parts = t.split(":")
        return f"{parts[-2][-2:]}:{parts[-1][:2]}"
    t = t.rjust(5, "0")
    return f"{t[-5:-3]}:{t[-3:-1]}"


@dataclass
class Topology:
    world_size: int | None = None
    pid_rank: dict[tuple[str, int], int] = field(default_factory=dict)
    rank_host: dict[int, str] = field(default_factory=dict)
    rank_gpu: dict[int, int] = field(default_factory=dict)
    rank_pid: dict[int, int] = field(default_factory=dict)
    bus_gpu: dict[tuple[str | None, str], int] = field(default_factory=dict)
    progress: dict[int, tuple[int, int]] = field(default_factory=dict)  # rank -> (enq, done)
    ranks_seen: set[int] = field(default_factory=set)
    claims: list[Claim] = field(default_factory=list)  # launchers' failure summaries
    tables: dict[str, RootCauseTable] = field(default_factory=dict)  # per source
    closing_pids: set[int] = field(default_factory=set)  # workers torchelastic SIGTERMed
    _comm_size: dict[tuple[str, int], int] = field(default_factory=dict)
    _table: dict[str, tuple[int, int, str | None]] = field(default_factory=dict)
    _table_host: dict[str, tuple[int, str]] = field(default_factory=dict)
    _root_cause_line: dict[str, int] = field(default_factory=dict)
    _table_time: dict[str, tuple[int, str]] = field(default_factory=dict)
    _wrapped_claim: dict[str, tuple[int, int | None]] = field(default_factory=dict)
    # Failure-table exit rows: source -> [(exitcode line, exitcode, the row's time)].
    _exit_rows: dict[str, list[tuple[int, int | None, datetime | None]]] = field(
        default_factory=dict
    )

    def see_rank(self, rank: int) -> None:
        self.ranks_seen.add(rank)

    def extract(
        self, name: str, m: re.Match[str], source: str, line: int, text: str, rank: int | None
    ) -> None:
        g = m.groupdict()
        if name == "world_size":
            n = to_int(g["n"] or g["n2"])
            if n:
                self.world_size = max(self.world_size or 0, n)
        elif name == "nccl_init":
            prefix = NCCL_PREFIX.search(text)
            host, pid = (
                (prefix.group("host"), to_int(prefix.group("pid"))) if prefix else ("", None)
            )
            dev, n, r = to_int(g["dev"]), to_int(g["n"]), to_int(g["rank"])
            if pid is None or dev is None or n is None or r is None:
                return
            self.bus_gpu[(host, _bus(g["bus"]))] = dev
            self.bus_gpu.setdefault((None, _bus(g["bus"])), dev)
            # Sub-communicators (tensor/pipeline groups) number their ranks from 0; only the
            # largest communicator a process joins is the world.
            if n >= self._comm_size.get((host, pid), 0):
                self._comm_size[(host, pid)] = n
                self.world_size = max(self.world_size or 0, n)
                self.bind(r, host=host, pid=pid, gpu=dev)
        elif name == "table_host":
            self._table_host[source] = (line, g["host"])
        elif name == "table_rank":
            r = to_int(g["rank"])
            if r is None:
                return
            host_row = self._table_host.get(source)
            host = host_row[1] if host_row and line - host_row[0] <= _TABLE_SPAN else None
            self._table[source] = (line, r, host)
            self.bind(r, host=host)
            table = self.tables.setdefault(source, RootCauseTable({}, source=source))
            time_row = self._table_time.get(source)
            hint_line = self._root_cause_line.get(source)
            if hint_line is not None and 0 < line - hint_line <= _TABLE_SPAN + 1:
                table.root, table.root_line = r, line
            elif time_row and 0 < line - time_row[0] <= _TABLE_SPAN and len(table.times) < 4096:
                table.times[r] = time_row[1]  # the root's own time is kept apart
            if table.root == r and time_row and 0 < line - time_row[0] <= _TABLE_SPAN:
                table.root_time = time_row[1]
        elif name == "table_time":
            self._table_time[source] = (line, g["t"])
        elif name == "no_other_failures":
            table = self.tables.setdefault(source, RootCauseTable({}, source=source))
            table.no_other_failures = True
        elif name == "elastic_wrapped_head":
            self._wrapped_claim[source] = (line, to_int(g["code"], signed=True))
        elif name == "elastic_wrapped_tail":
            head = self._wrapped_claim.pop(source, None)
            r = to_int(g["rank"])
            full = len(self.claims) >= launchers.MAX_CLAIMS
            if head and line - head[0] == 1 and r is not None and not full:
                pid = to_int(g["pid"])
                self.claims.append(Claim("torchelastic", r, True, head[1], pid, source, head[0]))
        elif name == "closing_pid" and len(self.closing_pids) < 4096:
            pid = to_int(g["pid"])
            if pid is not None:
                self.closing_pids.add(pid)
        elif name.startswith("claim_") and len(self.claims) < launchers.MAX_CLAIMS:
            self.claims.extend(launchers.claims_from(name, m, source, line))
        elif name == "table_exit":
            owner, pid = self.table_rank(source, line), to_int(g["pid"])
            rows = self._exit_rows.setdefault(source, [])
            if len(rows) < 4096:
                time_row = self._table_time.get(source)
                near = time_row is not None and 0 < line - time_row[0] <= _TABLE_SPAN
                stamp = _table_stamp(time_row[1]) if time_row is not None and near else None
                rows.append((line, to_int(g["code"], signed=True), stamp))
            listing = self.tables.get(source)
            if listing is not None and owner is not None and listing.root == owner:
                listing.root_code = to_int(g["code"], signed=True)
            if owner is not None and pid is not None:
                host_row = self._table_host.get(source)
                self.bind(owner, pid=pid, host=host_row[1] if host_row else None)
        elif name == "root_cause":
            self._root_cause_line[source] = line
        elif name == "progress" and rank is not None:
            enq, done = to_int(g["enq"], signed=True), to_int(g["done"], signed=True)
            if enq is not None and done is not None:
                self.progress[rank] = (enq, done)

    def escalated(self, source: str) -> tuple[set[int], int]:
        """The lines (exitcode to traceback) of failure-table rows that torchelastic's teardown
        wrote, and how many such rows there are: a SIGKILL stamped ESCALATION seconds or more
        after the table's first failure. The agent sends the surviving workers SIGTERM when
        one fails and SIGKILL to those still alive 30 s later, so such a row is the agent's
        kill, not a death of its own (a table of one exit 1 at 13:02:58, then -9 and -15
        together at 13:03:29)."""
        rows = self._exit_rows.get(source, [])
        stamps = [t for _, _, t in rows if t is not None]
        if not stamps:
            return set(), 0
        first = min(stamps)
        kills = [
            line
            for line, code, t in rows
            if code == -9 and t is not None and (t - first).total_seconds() >= ESCALATION
        ]
        # A row's exitcode line, its error_file line and its traceback line.
        return {line + k for line in kills for k in range(3)}, len(kills)

    def table_rank(self, source: str, line: int) -> int | None:
        row = self._table.get(source)
        if row and 0 <= line - row[0] <= _TABLE_SPAN:
            return row[1]
        return None

    def bind(
        self, rank: int, host: str | None = None, pid: int | None = None, gpu: int | None = None
    ) -> None:
        self.see_rank(rank)
        if host:
            self.rank_host.setdefault(rank, host)
        if pid is not None:
            self.rank_pid.setdefault(rank, pid)
            if host:
                self.pid_rank.setdefault((host, pid), rank)
        if gpu is not None:
            self.rank_gpu.setdefault(rank, gpu)

    def observe(self, text: str, rank: int | None) -> dict[str, object]:
        """Facts from a failure line: its NCCL prefix, CUDA device, Xid bus; binds them to
        ``rank`` when known and returns them (``rank`` filled from the pid when it was not)."""
        facts: dict[str, object] = {}
        prefix = NCCL_PREFIX.search(text)
        pid, dev = (
            (to_int(prefix.group("pid")), to_int(prefix.group("dev"))) if prefix else (None, None)
        )
        if prefix and pid is not None and dev is not None:
            host = prefix.group("host")
            facts.update(host=host, pid=pid, gpu=dev)
            if rank is None:
                rank = self.pid_rank.get((host, pid))
                if rank is not None:
                    facts["rank"] = rank
            if rank is not None:
                self.bind(rank, host=host, pid=pid, gpu=dev)
        device = _CUDA_DEVICE.search(text)
        gpu = to_int(device.group("gpu") or device.group("gpu2")) if device else None
        if gpu is not None:
            facts["gpu"] = gpu
            if rank is not None:
                self.bind(rank, gpu=gpu)
        xid = _XID.search(text)
        if xid:
            # Resolved to a GPU and rank only at the end (resolve_bus): the NCCL init lines
            # that map buses to devices may come from a file read after this one.
            facts["bus"] = _bus(xid.group("pci"))
            host_m = _SYSLOG_HOST.search(text)
            if host_m:
                facts["host"] = host_m.group("host")
        return facts

    def resolve_bus(self, host: str | None, bus: str) -> tuple[int | None, int | None]:
        """(gpu, rank) of the device on PCI ``bus`` of ``host``, where the log told us."""
        gpu = self.bus_gpu.get((host, bus), self.bus_gpu.get((None, bus)))
        if gpu is None:
            return None, None
        return gpu, self.rank_on(host, gpu)

    def rank_of_pid(self, pid: int) -> int | None:
        """The rank of a bare pid (no host on the line), when only one rank has it."""
        owners = {r for (_, p), r in self.pid_rank.items() if p == pid}
        return owners.pop() if len(owners) == 1 else None

    def rank_on(self, host: str | None, gpu: int) -> int | None:
        owners = [
            r
            for r, g in self.rank_gpu.items()
            if g == gpu and (host is None or self.rank_host.get(r) == host)
        ]
        return owners[0] if len(owners) == 1 else None
