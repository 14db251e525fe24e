"""The Finding: what both engines (log diagnosis and checkpoint drift) report.

Its JSON form is the contract in shared-schema/diagnosis.schema.json (``$defs/finding``);
the language server and the extension consume exactly this shape.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from denpex.errors import InputError

Role = Literal["initiating", "collateral", "context"]
Strength = Literal["high", "medium", "low"]

SCHEMA_VERSION = 2


@dataclass
class Evidence:
    source: str  # file path, "<stdin>", a terminal name or a document uri
    line: int  # 1-based
    text: str
    rank: int | None
    role: Role


@dataclass
class Attribution:
    """How sure the initiating rank (or, without one, the suspects) is, and why in one line."""

    confidence: Strength
    reason: str


@dataclass
class Finding:
    id: str  # catalog entry id
    title: str
    category: str
    confidence: float  # 0..1
    initiating_rank: int | None
    collateral_ranks: list[int] = field(default_factory=list)
    suspect_ranks: list[int] = field(default_factory=list)
    host: str | None = None
    gpu: int | None = None
    evidence: list[Evidence] = field(default_factory=list)
    root_cause: str = ""
    fix: str = ""
    verification: list[str] = field(default_factory=list)
    related: list[str] = field(default_factory=list)
    # Per verification command: safe to run as shown (see catalog.fill_template). A command
    # that is not is shown for the user to complete or check, never sent to run.
    verification_runnable: list[bool] = field(default_factory=list)
    attribution: Attribution | None = None  # log diagnosis only; None without a rank or suspects

    def __post_init__(self) -> None:
        if len(self.verification_runnable) != len(self.verification):
            raise ValueError("verification_runnable needs one flag per verification command")

    def to_json(self) -> dict[str, Any]:
        """The schema's fields, plus the phrases every consumer shows as they are (the
        editor renders them; ``from_json`` ignores them and they are recomputed here)."""
        out = asdict(self)
        out["initiator"] = describe_initiator(self.initiating_rank, self.host, self.gpu)
        out["collateral_ranks_text"] = compress_ranks(self.collateral_ranks)
        out["suspect_ranks_text"] = compress_ranks(self.suspect_ranks)
        return out

    @classmethod
    def from_json(cls, doc: Any, what: str = "finding") -> Finding:
        """The inverse of to_json, checked field by field: findings come back from worker
        processes and from the editor, and InputError names what does not fit."""
        if not isinstance(doc, dict):
            raise InputError(f"{what} is not an object")
        verification = _strings(doc, "verification", what)
        runnable = (
            _bools(doc, "verification_runnable", what) if "verification_runnable" in doc else []
        )
        if len(runnable) != len(verification):
            # A client that leaves the flags out gets commands shown, never offered to run.
            runnable = [False] * len(verification)
        return cls(
            id=_field(doc, "id", str, what),
            title=_field(doc, "title", str, what),
            category=_field(doc, "category", str, what),
            confidence=_confidence(doc, what),
            initiating_rank=_field(doc, "initiating_rank", (int, type(None)), what),
            collateral_ranks=_ints(doc, "collateral_ranks", what),
            suspect_ranks=_ints(doc, "suspect_ranks", what),
            host=_field(doc, "host", (str, type(None)), what),
            gpu=_field(doc, "gpu", (int, type(None)), what),
            evidence=[_evidence(e, what) for e in _field(doc, "evidence", list, what)],
            root_cause=_field(doc, "root_cause", str, what),
            fix=_field(doc, "fix", str, what),
            verification=verification,
            related=_strings(doc, "related", what) if "related" in doc else [],
            verification_runnable=runnable,
            attribution=_attribution(doc.get("attribution"), what),
        )


def diagnosis_json(findings: list[Finding]) -> dict[str, Any]:
    """The top-level diagnosis document, root-cause finding first."""
    return {"schema_version": SCHEMA_VERSION, "findings": [f.to_json() for f in findings]}


def compress_ranks(ranks: list[int]) -> str:
    """[0, 1, 2, 4, 5, 7] -> "0-2,4-5,7" (how operators write rank sets)."""
    out: list[str] = []
    ordered = sorted(set(ranks))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        out.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(out)


# -- the initiator in words: every report, diagnostic and hover phrases it from here --------


def host_gpu(host: str | None, gpu: int | None) -> str:
    """Where a rank ran, from whichever is known: "host node1, GPU 3" ("" if neither)."""
    return ", ".join(p for p in (host and f"host {host}", gpu is not None and f"GPU {gpu}") if p)


def describe_initiator(rank: int | None, host: str | None, gpu: int | None) -> str:
    """The initiator as one phrase ("rank 3 on node-7, GPU 3") from whichever are known;
    the editor's panel and the Markdown export show it (the export escapes the host)."""
    if rank is None and host is None and gpu is None:
        return "not identified"
    text = "unknown rank" if rank is None else f"rank {rank}"
    if host is not None:
        text += f" on {host}"
    if gpu is not None:
        text += f", GPU {gpu}"
    return text


def initiator_summary(f: Finding) -> str:
    """The attribution as a clause for a diagnostic or hover: "initiating rank 5 (host node1,
    GPU 3)", with the confidence when it is not high."""
    if f.initiating_rank is None:
        if f.suspect_ranks:
            return f"initiating rank unknown, suspects {compress_ranks(f.suspect_ranks)}"
        return "initiating rank unknown" if f.collateral_ranks else "no rank named"
    where = host_gpu(f.host, f.gpu)
    a = f.attribution
    sure = f", {a.confidence} confidence" if a is not None and a.confidence != "high" else ""
    return f"initiating rank {f.initiating_rank}" + (f" ({where})" if where else "") + sure


def initiator_field(f: Finding) -> str:
    """The value of the CLI report's "Initiating rank" line: "5 (host node1, GPU 3)", or
    why it is unknown."""
    if f.initiating_rank is None:
        if f.suspect_ranks:
            return "unknown, see suspects"
        if any(e.role == "initiating" for e in f.evidence):
            return "unknown (the log does not say which rank)"  # one rank's log, unprefixed
        return "unknown (only downstream reports)"
    where = host_gpu(f.host, f.gpu)
    return f"{f.initiating_rank}" + (f" ({where})" if where else "")


def findings_from_json(diagnosis: Any) -> list[Finding]:
    """The findings of a diagnosis document (shared-schema/diagnosis.schema.json)."""
    if not isinstance(diagnosis, dict) or not isinstance(diagnosis.get("findings"), list):
        raise InputError("a diagnosis is an object with a findings list")
    return [Finding.from_json(f, f"finding {i}") for i, f in enumerate(diagnosis["findings"])]


# -- checking JSON fields -------------------------------------------------------------------


def _attribution(obj: Any, what: str) -> Attribution | None:
    if obj is None:
        return None
    what = f"{what}: attribution"
    if not isinstance(obj, dict) or obj.get("confidence") not in ("high", "medium", "low"):
        raise InputError(f"{what} needs a confidence of high, medium or low")
    return Attribution(confidence=obj["confidence"], reason=_field(obj, "reason", str, what))


_MAX_INT = 2**63  # ranks, GPUs and line numbers; a bigger number is not one (nor printable)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < _MAX_INT


def _field(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], what: str) -> Any:
    value = obj.get(key)
    if isinstance(value, int) and not isinstance(value, bool):
        ok = int in (kind if isinstance(kind, tuple) else (kind,)) and _count(value)
    else:
        ok = isinstance(value, kind) and not isinstance(value, bool)
    if not ok:
        raise InputError(f"{what}: {key} has the wrong type or is out of range")
    return value


def _ints(obj: dict[str, Any], key: str, what: str) -> list[int]:
    values = _field(obj, key, list, what)
    if not all(_count(v) for v in values):
        raise InputError(f"{what}: {key} must hold integers from 0")
    return list(values)


def _confidence(obj: dict[str, Any], what: str) -> float:
    value = obj.get("confidence")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise InputError(f"{what}: confidence must be a number from 0 to 1")
    return float(value)


def _strings(obj: dict[str, Any], key: str, what: str) -> list[str]:
    values = _field(obj, key, list, what)
    if not all(isinstance(v, str) for v in values):
        raise InputError(f"{what}: {key} must hold strings")
    return list(values)


def _evidence(obj: Any, what: str) -> Evidence:
    if not isinstance(obj, dict):
        raise InputError(f"{what}: evidence must be objects")
    role = _field(obj, "role", str, what)
    if role not in ("initiating", "collateral", "context"):
        raise InputError(f"{what}: unknown evidence role {role[:40]!r}")
    return Evidence(
        source=_field(obj, "source", str, what),
        line=_field(obj, "line", int, what),
        text=_field(obj, "text", str, what),
        rank=_field(obj, "rank", (int, type(None)), what),
        role=role,
    )


def _bools(obj: dict[str, Any], key: str, what: str) -> list[bool]:
    values = _field(obj, key, list, what)
    if not all(isinstance(v, bool) for v in values):
        raise InputError(f"{what}: {key} must hold true/false")
    return list(values)
