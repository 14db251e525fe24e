"""What the server has published, by origin, merged per document when published.

Four origins put diagnostics on a document: its own scan, ``denpex.diagnose`` on a
selection of it, a drift check that flagged a checkpoint (or probe record) file, and
``denpex.diagnose`` on the job folder that holds it. Each origin replaces only its own
layer; publishing merges the layers (``diagnostics.merged``), so a failure found by two
origins on the same line is counted once. Hover and code actions read the marks of every
layer, so they answer from the server's own state rather than from what the client echoes.
"""

from __future__ import annotations

from collections.abc import Callable

from lsprotocol import types

from denpex.lsp.diagnostics import Mark, Published, merged


class Layers:
    def __init__(self, publish: Callable[[types.PublishDiagnosticsParams], None]) -> None:
        self._publish = publish
        self.scanned: dict[str, Published] = {}  # document scans
        self.selections: dict[str, Published] = {}  # denpex.diagnose on a selection
        self.drift: dict[str, Published] = {}  # a flagged checkpoint file
        self.folders: dict[str, Published] = {}  # denpex.diagnose on a job folder
        self._drift_marks: dict[str, list[str]] = {}  # watched run → uri of its flagged file
        self._folder_marks: dict[str, list[str]] = {}  # job folder → uris of its logs

    def _all(self) -> tuple[dict[str, Published], ...]:
        return (self.scanned, self.selections, self.drift, self.folders)

    def publish(self, uri: str, version: int | None = None) -> None:
        diags = merged([layer[uri] for layer in self._all() if uri in layer])
        self._publish(types.PublishDiagnosticsParams(uri=uri, diagnostics=diags, version=version))

    def marks_at(self, uri: str, first: int, last: int) -> list[Mark]:
        """The marks on 0-based lines first..last, from every layer."""
        out: list[Mark] = []
        for layer in self._all():
            pub = layer.get(uri)
            if pub:
                for line in range(first, last + 1):
                    out.extend(pub.marks.get(line, []))
        return out

    def forget_selection(self, uri: str) -> None:
        self.selections.pop(uri, None)
        self.publish(uri)

    def replace_drift(self, run: str, by_uri: dict[str, Published]) -> None:
        """A watched run's flagged file (none when it is not flagged), replacing the last."""
        self._replace(self.drift, self._drift_marks, run, by_uri)

    def replace_folder(self, folder: str, by_uri: dict[str, Published]) -> None:
        """A job folder's diagnostics on its logs, replacing those of its last diagnosis."""
        self._replace(self.folders, self._folder_marks, folder, by_uri)

    def _replace(
        self,
        layer: dict[str, Published],
        marks: dict[str, list[str]],
        owner: str,
        by_uri: dict[str, Published],
    ) -> None:
        for uri in marks.pop(owner, []):
            layer.pop(uri, None)
            self.publish(uri)
        layer.update(by_uri)
        marks[owner] = list(by_uri)
        for uri in by_uri:
            self.publish(uri)
