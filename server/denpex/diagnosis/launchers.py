"""What launchers say about which process failed first, and how far to trust it.

A launcher's failure summary is the only evidence of the culprit in many real logs (the
rank itself died without a word: SIGKILL, SIGSEGV). Each summary names one process:

- torchelastic: ``failed (exitcode: -9) local_rank: 1 (pid: 1234) of binary`` and the
  ``Root Cause (first observed failure)`` table (global ``rank``, ``exitcode``, ``time``);
- mpirun: ``mpirun noticed that process rank 7 with PID ... exited on signal 9`` and
  ``The first process to do so was: Process name: [[35302,1],0]``;
- torch.multiprocessing: ``process 3 terminated with signal SIGKILL``;
- srun: ``srun: error: node-b: task 11: Killed``;
- Ray Train: ``Worker 0 has failed.``
- PaddlePaddle: ``the trainer process with rank=[3] was aborted``

The traps: torchelastic's "first failure" is only the first exit its
agent noticed, so a rank that aborted (-6) after watchdog timeouts is collateral, and a
table whose failures share one second does not determine anything; SIGTERM (-15) is the
launcher's own teardown. DeepSpeed's launcher prints the command of the *last* process it
spawned, so its ``--local_rank=N`` is never read as a claim.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from denpex.diagnosis.numbers import to_int
from denpex.finding import Strength

# Claims kept per log set: summaries are a handful of lines; a log repeating them is noise.
MAX_CLAIMS = 64
# Exit codes that say "stopped by someone else" (SIGTERM, SIGINT, SIGHUP): teardown.
_TEARDOWN = {-15, -2, -1, 143, 130, 129}
# Deaths that a hang does not cause: killed from outside, or a crash in native code.
_FROM_OUTSIDE = {-9, -11, -7, -4, -8, 137, 139, 135}
_SIGNALS = {"SIGKILL": -9, "SIGSEGV": -11, "SIGABRT": -6, "SIGBUS": -7, "SIGTERM": -15}
_SIGNALS.update({"SIGINT": -2, "SIGHUP": -1, "SIGILL": -4, "SIGFPE": -8})


@dataclass(frozen=True)
class Claim:
    """One launcher line naming one process as failed."""

    # "torchelastic", "root-cause", "mpirun", "mpich", "spawn", "srun", "ray", "paddle",
    # "paddle_container"
    kind: str
    rank: int
    local: bool  # torchelastic's local_rank: the global rank only on a single node
    exitcode: int | None  # negative: killed by that signal
    pid: int | None
    source: str
    line: int
    killed: bool = False  # srun's plain "Killed" (SIGKILL; not its "Out Of Memory")
    abnormal: bool = False  # srun --wait's "exited abnormally": no success, the code unsaid


@dataclass(frozen=True)
class Attribution:
    """A graded answer: which rank, how sure, and why (one line)."""

    rank: int | None
    strength: Strength | None
    reason: str
    suspects: tuple[int, ...] = ()
    line: tuple[str, int] | None = None  # (source, line) of the summary naming the rank
    teardown: tuple[int, ...] = ()  # ranks the launcher SIGTERMed after it (collateral)


_ELASTIC_FAILED = r"failed \(exitcode: (?P<code>-?\d{1,4})\) local_rank:"

# Anchor literals and patterns, run only on lines holding an anchor (see context.py).
PATTERNS: dict[str, tuple[list[str], re.Pattern[str]]] = {
    "claim_torchelastic": (
        ["local_rank: "],
        re.compile(
            _ELASTIC_FAILED + r" (?P<rank>\d{1,6})"
            # rich-formatted logging wraps before the pid, the source file on the right; a
            # pasted line may stop right after the rank.
            r"(?: \(pid: (?:(?P<pid>\d{1,10})\)|\s{1,40}[\w.]{1,64}\.py:\d{1,6}\s{0,8}$)|\s{0,8}$)"
        ),
    ),
    # The same line wrapped by a terminal right after "local_rank:", the rank starting the next
    # line ("...failed (exitcode: -9) local_rank:" / "0 (pid: 18) of binary"): the two halves
    # are joined per source by the topology (context.py).
    "elastic_wrapped_head": (["local_rank:"], re.compile(_ELASTIC_FAILED + r"\s{0,8}$")),
    "elastic_wrapped_tail": (
        [" (pid: "],
        re.compile(r"^\s{0,8}(?P<rank>\d{1,6}) \(pid: (?P<pid>\d{1,10})\) of binary"),
    ),
    # torchelastic before PyTorch 1.9 (no failure table): "CHILD PROCESS FAILED WITH NO
    # ERROR_FILE" and then "Child process 2814 (local_rank 0) FAILED (exitcode 1)".
    "claim_torchelastic_legacy": (
        ["FAILED (exitcode "],
        re.compile(
            r"Child process (?P<pid>\d{1,10}) \(local_rank (?P<rank>\d{1,6})\) "
            r"FAILED \(exitcode (?P<code>-?\d{1,4})\)"
        ),
    ),
    "claim_mpirun": (
        ["noticed that process rank"],
        re.compile(
            r"noticed that process rank (?P<rank>\d{1,6}) with PID (?P<pid>\d{1,10}) "
            # Open MPI wraps this message at 80 columns, often right before "signal N"; a
            # retyped line may leave the node name out.
            r"on node (?:\S{1,255} )?exited on(?: signal (?P<signal>\d{1,3})|\s{0,8}$)"
        ),
    ),
    "claim_mpirun_first": (
        ["Process name: [["],
        # A paste quoted in markdown keeps its "> " before the indent.
        re.compile(r"^(?:> ?)?\s{0,8}Process name: \[\[\d{1,10},\d{1,10}\],(?P<rank>\d{1,6})\]"),
    ),
    # MPICH's Hydra reports every rank's end: "node1: rank 0 exited with code 139",
    # "node1: rank 1 died from signal 15" (its own teardown); Cray/HPE PALS prints it without
    # the node ("rank 0 died from signal 11 and dumped core").
    "claim_mpich": (
        ["rank "],
        re.compile(
            r"^(?:[\w.-]{1,255}: )?rank (?P<rank>\d{1,6}) "
            r"(?:exited with code (?P<code>\d{1,3})|died from signal (?P<signal>\d{1,3}))"
        ),
    ),
    "claim_spawn": (
        ["terminated with "],
        re.compile(
            r"\bprocess (?P<rank>\d{1,6}) terminated with "
            # Windows' crash statuses are ten digits (3221226505: 0xC0000409).
            r"(?:signal (?P<signame>SIG[A-Z]{2,6})|exit code (?P<code>\d{1,10})\b)"
        ),
    ),
    # torch.multiprocessing.spawn re-raising in the parent the exception of the first process
    # it found failed (it then terminates the others), with that process's traceback below:
    # a first failure noticed, like torchelastic's, and a local index on several hosts.
    "claim_spawn_raised": (
        ["terminated with the following error"],
        re.compile(r"^-- Process (?P<rank>\d{1,6}) terminated with the following error:"),
    ),
    # (yhrun: the Tianhe systems' build of srun.)
    "claim_srun": (
        ["srun: error: ", "yhrun: error: "],
        re.compile(
            r"(?:sr|yhr)un: error: [A-Za-z0-9._-]{1,255}: tasks? (?P<ranks>[0-9][0-9,-]{0,200}): "
            r"(?P<what>Killed|Out Of Memory|Segmentation fault|Aborted|Bus error|Terminated"
            r"|Exited with exit code \d{1,3})"
        ),
    ),
    # srun --wait's report once the first task has ended ("First task exited 60s ago"): the
    # task that ended without success, its code unsaid.
    "claim_srun_abnormal": (
        ["exited abnormally"],
        re.compile(
            r"(?:sr|yhr)un: (?:StepId=[0-9.]{1,40} |step:[0-9.]{1,40} )?"
            r"tasks? (?P<ranks>[0-9][0-9,-]{0,200}): exited abnormally"
        ),
    ),
    # torchelastic tearing down the other workers: their pids, mapped to local ranks below.
    "closing_pid": (
        ["closing signal SIG"],
        re.compile(r"Sending process (?P<pid>\d{1,10}) closing signal SIG(?:TERM|KILL)"),
    ),
    # PaddlePaddle's launcher names the trainer it saw abort.
    "claim_paddle": (
        ["was aborted"],
        re.compile(r"the trainer process with rank=\[(?P<rank>\d{1,6})\] was aborted"),
    ),
    # ... and its newer controller: "Container rank 0 status failed cmd [...] code -9 log ...".
    "claim_paddle_container": (
        ["Container rank "],
        re.compile(
            # (.* and not a bounded repeat: Hyperscan may search this pattern directly, and
            # a repeat of thousands makes its automaton too large to compile.)
            r"Container rank (?P<rank>\d{1,6}) status failed cmd .* "
            r"code (?P<code>-?\d{1,4}) log "
        ),
    ),
    "claim_ray": (
        ["has failed"],
        re.compile(
            r"\((?:TorchTrainer|TrainTrainable)[^)]{0,80}\) Worker (?P<rank>\d{1,6}) has failed"
        ),
    ),
}


def claims_from(name: str, m: re.Match[str], source: str, line: int) -> list[Claim]:
    """The claims one matched summary line makes (srun may list several tasks)."""
    g = m.groupdict()
    kind = name.removeprefix("claim_").replace("_first", "").replace("_legacy", "")
    pid = to_int(g.get("pid"))
    if name == "claim_srun_abnormal":
        ranks = _task_list(g["ranks"])
        return [Claim("srun", r, False, None, None, source, line, abnormal=True) for r in ranks]
    if name == "claim_srun":
        ranks = _task_list(g["ranks"])
        what = g["what"]
        code = (
            -9 if what in ("Killed", "Out Of Memory") else -11 if what.startswith("Seg") else None
        )
        code = -6 if what == "Aborted" else -7 if what == "Bus error" else code
        code = -15 if what == "Terminated" else code
        if code is None:
            code = to_int(what.rsplit(" ", 1)[-1])
        killed = what == "Killed"
        return [Claim(kind, r, False, code, None, source, line, killed) for r in ranks]
    rank = to_int(g.get("rank"))
    if rank is None:
        return []
    if name in ("claim_mpirun", "claim_mpich") and g.get("signal"):
        code = -(to_int(g["signal"]) or 0) or None
    elif name == "claim_spawn" and g.get("signame"):
        code = _SIGNALS.get(g["signame"])
    elif name == "claim_spawn_raised":
        code = 1  # an uncaught exception's exit
    else:
        code = to_int(g.get("code"), signed=True)
    local = kind in ("torchelastic", "spawn_raised")
    return [Claim(kind, rank, local, code, pid, source, line)]


def _task_list(text: str) -> list[int]:
    """srun's "0-3,7" -> [0, 1, 2, 3, 7], at most a few hundred ranks."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        a, b = to_int(lo), to_int(hi) if hi else to_int(lo)
        if a is not None and b is not None and 0 <= b - a < 512 and len(out) < 512:
            out.extend(range(a, b + 1))
    return out


@dataclass
class RootCauseTable:
    """torchelastic's failure tables in one file: each failure's time, and the root cause."""

    times: dict[int, str]  # other failures: rank -> "2024-03-05_07:01:51"
    root: int | None = None
    root_time: str | None = None
    root_code: int | None = None  # the root row's exitcode (negative: a signal)
    source: str = ""
    root_line: int = 0  # the root row's "rank : N" line (shown as the failure's line)
    no_other_failures: bool = False

    def ambiguous(self) -> bool:
        """Another failure stamped in the root cause's second: the agent's pick is a coin."""
        return self.root_time is not None and self.root_time in self.times.values()


def attribute(
    claims: list[Claim],
    tables: list[RootCauseTable],
    *,
    after_timeouts: bool,
    pid_rank: dict[int, int],
    hosts: int,
    closing_pids: frozenset[int] = frozenset(),
    per_process: bool = True,
) -> Attribution:
    """The rank the launchers' summaries name, when nothing in the log itself does.

    ``after_timeouts``: the log shows collective timeouts, so a SIGABRT is the watchdog's.
    ``pid_rank``: global ranks of pids, from failure tables, for torchelastic's local ranks.
    ``hosts``: how many hosts the log shows; a local rank is global only on one.
    ``per_process``: the failure is one a process meets on its own; else spawn's report of
    the first process that raised names no rank.
    """
    if not per_process:
        claims = [c for c in claims if c.kind != "spawn_raised"]
    claims = claims + [
        Claim("root-cause", t.root, False, t.root_code, None, t.source, t.root_line)
        for t in tables
        if t.root is not None
    ]
    if any(t.ambiguous() for t in tables):
        claims = [c for c in claims if c.kind not in ("torchelastic", "root-cause")]
    bad_exit = srun_bad_exit(claims)
    crash = _mpich_first_crash(claims)
    if tables:
        # torchelastic's tables mean srun started one torchrun agent per node: its task
        # numbers count nodes, not ranks (its exits still end the step, above).
        claims = [c for c in claims if c.kind != "srun"]
    usable: dict[int, Claim] = {}
    for c in claims:
        if c.exitcode in _TEARDOWN or (c.killed and after(bad_exit, c.source, c.line)):
            continue
        if c.kind == "mpich" and c.exitcode == -9 and after(crash, c.source, c.line):
            continue
        if after_timeouts and (c.exitcode is None or c.exitcode not in _FROM_OUTSIDE):
            # The watchdog's abort (-6) or the DistBackendError it raises (exit 1): the rank
            # noticed the hang first, which says nothing about who caused it.
            continue
        rank = pid_rank.get(c.pid, c.rank) if c.local and c.pid is not None else c.rank
        if c.local and rank == c.rank and c.pid not in pid_rank and hosts > 1:
            continue  # a local rank on a multi-node job names no global rank
        usable.setdefault(rank, c)
    if not usable:
        gap = _srun_gap(claims)
        if gap is not None:
            return Attribution(gap, "low", "the only task missing from srun's Terminated list")
    if len(usable) == 1:
        rank, claim = next(iter(usable.items()))
        sole = claim.kind in ("mpirun", "mpich", "spawn")  # they report every exit
        sole = sole or any(t.no_other_failures for t in tables)
        where = (claim.source, claim.line) if claim.line else None
        peers = _torn_down(claim, closing_pids) if claim.kind == "torchelastic" else ()
        why = _reason(claim)
        return Attribution(rank, "medium" if sole else "low", why, line=where, teardown=peers)
    if len(usable) > 1:
        return Attribution(None, None, "launchers name several failed ranks", tuple(sorted(usable)))
    return Attribution(None, None, "")


def srun_bad_exit(claims: list[Claim]) -> Claim | None:
    """The first task srun reports exiting with a code of its own. srun then ends the step
    (--kill-on-bad-exit: "_step_signal: Terminating StepId", Slurm's bare "*** STEP ...
    CANCELLED AT ... ***") and SIGKILLs the other tasks, which it reports as "Killed"."""
    exits = [
        c
        for c in claims
        if c.kind == "srun" and (c.abnormal or (c.exitcode is not None and c.exitcode > 0))
    ]
    return min(exits, key=lambda c: (c.source, c.line), default=None)


def _mpich_first_crash(claims: list[Claim]) -> Claim | None:
    """The first rank MPICH/PALS reports dying of a signal other than SIGKILL or SIGTERM: the
    launcher then SIGKILLs the other ranks, and reports each of them "died from signal 9"."""
    crashes = [
        c
        for c in claims
        if c.kind == "mpich"
        and c.exitcode is not None
        and c.exitcode < 0
        and c.exitcode not in _TEARDOWN
        and c.exitcode != -9
    ]
    return min(crashes, key=lambda c: (c.source, c.line), default=None)


def after(claim: Claim | None, source: str, line: int) -> bool:
    """Is (source, line) a later line of the file that holds ``claim``?"""
    return claim is not None and source == claim.source and line > claim.line


def _torn_down(claim: Claim, closing: frozenset[int]) -> tuple[int, ...]:
    """The local ranks of the workers torchelastic SIGTERMed after ``claim``'s failure. It
    starts local ranks in order, so when the failed pid and the closed ones are exactly one
    run of consecutive pids starting at local rank 0, a pid's offset is its local rank."""
    if claim.pid is None or not closing or claim.pid in closing:
        return ()
    base = claim.pid - claim.rank
    ranks = {pid - base for pid in closing}
    if ranks | {claim.rank} != set(range(len(closing) + 1)):
        return ()
    return tuple(sorted(ranks))


def _srun_gap(claims: list[Claim]) -> int | None:
    """srun SIGTERMs every task once one has ended: a single hole in its Terminated list, below
    the highest task, is the task that ended first."""
    terminated = {c.rank for c in claims if c.kind == "srun" and c.exitcode == -15}
    if len(terminated) < 3:
        return None
    gaps = [r for r in range(max(terminated)) if r not in terminated]
    return gaps[0] if len(gaps) == 1 else None


def _reason(claim: Claim) -> str:
    what = {
        "torchelastic": "torchelastic's failure summary",
        "root-cause": "torchelastic's Root Cause table",
        "mpirun": "mpirun's exit report",
        "mpich": "MPICH's exit report",
        "spawn": "torch.multiprocessing's exit report",
        "spawn_raised": "torch.multiprocessing's report of the first process that raised",
        "srun": "srun's task report",
        "ray": "Ray Train's worker report",
        "paddle": "Paddle's launcher report",
        "paddle_container": "Paddle's launcher report",
    }.get(claim.kind, "the launcher's summary")
    how = ""
    if claim.exitcode is not None:
        how = f" (exit {claim.exitcode})" if claim.exitcode >= 0 else f" (signal {-claim.exitcode})"
    return f"only {what} names it{how}"
