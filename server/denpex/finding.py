"""The Finding: what both engines (log diagnosis and checkpoint drift) report.

Its JSON form is the contract in shared-schema/diagnosis.schema.json (``$defs/finding``);
the language server and the extension consume exactly this shape.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Role = Literal["initiating", "collateral", "context"]

SCHEMA_VERSION = 1


@dataclass
class Evidence:
    source: str  # file path, "<stdin>", a terminal name or a document uri
    line: int  # 1-based
    text: str
    rank: int | None
    role: Role


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

    def __post_init__(self) -> None:
        if len(self.verification_runnable) != len(self.verification):
            raise ValueError("verification_runnable needs one flag per verification command")

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Finding:
        """The inverse of to_json, for findings a Denpex worker process sent back."""
        return cls(**{**doc, "evidence": [Evidence(**e) for e in doc["evidence"]]})


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
