"""The packages of ``server/denpex`` import one another without a cycle (every import,
including those inside functions): checkpoint I/O and the fingerprint format sit below
drift and the probe, and no engine imports the demo, the CLI or the language server."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "server" / "denpex"


def _unit(module: str) -> str | None:
    """``denpex.drift.api`` -> ``drift``: a subpackage, or a top-level module."""
    parts = module.split(".")
    if parts[0] != "denpex" or len(parts) < 2:
        return None
    return parts[1]


def _exists(unit: str) -> bool:
    return (ROOT / unit).is_dir() or (ROOT / f"{unit}.py").is_file()


def _edges() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT.parent).with_suffix("")
        source = _unit(".".join(rel.parts))
        if source is None or source == "__init__":
            continue
        targets = graph.setdefault(source, set())
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
                if node.module == "denpex":  # from denpex import catalog
                    names = [f"denpex.{alias.name}" for alias in node.names]
            for name in names:
                target = _unit(name)
                if target and target != source and _exists(target):
                    targets.add(target)
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1 on the current path, 2 done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_packages_import_each_other_without_a_cycle() -> None:
    graph = _edges()
    assert {"checkpoints", "fingerprints", "drift", "probe"} <= set(graph)
    assert _cycle(graph) is None, " -> ".join(_cycle(graph) or [])


def test_io_packages_know_nothing_of_drift_or_the_probe() -> None:
    graph = _edges()
    assert graph["checkpoints"] <= {"errors", "safepickle"}, graph["checkpoints"]
    assert graph["fingerprints"] <= {"errors"}, graph["fingerprints"]
    for engine in ("drift", "probe", "diagnosis", "checkpoints", "fingerprints"):
        assert not graph[engine] & {"demo", "commands", "lsp", "cli"}, (engine, graph[engine])
