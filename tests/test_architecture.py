"""The invariants of docs/architecture.md, checked on the source tree: engines import no
layer above them, checkpoint I/O and the fingerprint format know nothing of drift or the
probe, the packages import one another without a cycle, and no module is over 450 lines.

Imports are read with ``ast``, so imports inside functions count too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from paths import ROOT as REPO

PACKAGE = REPO / "server" / "denpex"

# Engines turn logs and checkpoints into typed results. The layers above present those
# results (CLI, language server, exports for people, the demo) and may import engines,
# never the other way round.
ENGINES = ("diagnosis", "catalog", "checkpoints", "fingerprints", "drift", "probe")
ABOVE_ENGINES = frozenset({"cli", "__main__", "commands", "lsp", "export", "demo"})

MAX_LINES = 450


def _unit(module: str) -> str | None:
    """``denpex.drift.api`` -> ``drift``: the subpackage or top-level module it lies in."""
    parts = module.split(".")
    return parts[1] if parts[0] == "denpex" and len(parts) > 1 else None


def _imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, relative imports resolved, ``from denpex import x``
    read as ``denpex.x``."""
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    here = list(rel.parts[:-1])  # the package this module's relative imports start from
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = here[: len(here) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _graph() -> dict[str, set[str]]:
    """Package -> the other packages (or top-level modules) of denpex it imports."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _unit(".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts))
        if source is None or source == "__init__":
            continue
        targets = graph.setdefault(source, set())
        for module in _imported_modules(path):
            target = _unit(module)
            # ``from denpex import __version__`` names no package; only real ones count.
            if target and target != source and _exists(target):
                targets.add(target)
    return graph


def _exists(unit: str) -> bool:
    return (PACKAGE / unit).is_dir() or (PACKAGE / f"{unit}.py").is_file()


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one package (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = set()
            while True:
                member = stack.pop()
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(component)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_import_reader_sees_the_known_edges() -> None:
    # Guards the parser itself: an empty graph would pass every test below.
    graph = _graph()
    assert {*ENGINES, "lsp", "commands"} <= graph.keys()
    assert {"diagnosis", "drift", "catalog"} <= graph["lsp"]
    assert "catalog" in graph["diagnosis"]  # written `from denpex import catalog`


@pytest.mark.parametrize("engine", ENGINES)
def test_engines_import_no_layer_above_them(engine: str) -> None:
    above = _graph()[engine] & ABOVE_ENGINES
    assert not above, f"denpex.{engine} imports {sorted(above)}, a layer above the engines"


def test_checkpoint_io_and_the_fingerprint_format_know_nothing_of_drift_or_the_probe() -> None:
    graph = _graph()
    assert graph["checkpoints"] <= {"errors", "notes", "safepickle"}, graph["checkpoints"]
    assert graph["fingerprints"] <= {"errors"}, graph["fingerprints"]


def test_packages_import_each_other_without_a_cycle() -> None:
    cycles = _cycles(_graph())
    assert not cycles, f"import cycles between packages: {cycles}"


def _line_counts() -> dict[str, int]:
    sources = [*PACKAGE.rglob("*.py"), *(REPO / "extension" / "src").rglob("*.ts")]
    return {
        path.relative_to(REPO).as_posix(): len(path.read_text(encoding="utf-8").splitlines())
        for path in sources
        if "generated" not in path.relative_to(REPO).parts
    }


def test_no_module_over_450_lines() -> None:
    over = {path: n for path, n in _line_counts().items() if n > MAX_LINES}
    assert not over, f"modules over {MAX_LINES} lines (split them): {over}"
