"""``workspace/executeCommand denpex.diagnose``: diagnose text, a document's lines, a
terminal's buffered output or a whole job folder, and answer with the diagnosis.

With a ``uri`` (and no terminal), the findings are also published on that document as its
``selections`` layer; with a ``folder``, on the lines of the folder's logs as their
``folders`` layer. Params arrive checked (``protocol.DiagnoseParams``); what is left to
refuse here needs the server's state: a terminal or document it does not hold, a folder that
is not one.
"""

from __future__ import annotations

import asyncio
import os
import shlex
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams
from pygls.uris import to_fs_path

from denpex.diagnosis import LogScanner
from denpex.errors import InputError
from denpex.finding import Finding, diagnosis_json, findings_from_json
from denpex.lsp import diagnostics, positions
from denpex.lsp.dumps import FOLDER_TIMEOUT, folder_diagnostics, run_worker
from denpex.lsp.protocol import DiagnoseParams
from denpex.lsp.workers import WorkerFailed

if TYPE_CHECKING:
    from denpex.lsp.server import DenpexServer


async def diagnose(ls: DenpexServer, params: DiagnoseParams) -> dict[str, Any]:
    if params.folder is not None:
        return await diagnose_folder(ls, params.folder)
    uri, rng = params.uri, params.range
    if params.text is not None:
        text, source = params.text, ls.documents.source_of(uri) if uri else "<selection>"
    elif params.terminal_id is not None:
        output = await ls.terminals.output(params.terminal_id)
        if output is None:
            raise JsonRpcInvalidParams(
                f"denpex.diagnose: no output recorded for terminal {params.terminal_id!r}"
            )
        source, text = output.name, "\n".join(output.lines)
    else:
        assert uri is not None and rng is not None  # DiagnoseParams requires them then
        found = ls.text_of_lines(
            uri, rng.start.line, max(rng.end.line - (rng.end.character == 0), rng.start.line)
        )
        if found is None:
            raise JsonRpcInvalidParams(f"denpex.diagnose: {uri} is not open; send its text")
        text, source = "\n".join(found[0]), ls.documents.source_of(uri)
    start_line = rng.start.line if rng is not None else 0

    def run() -> list[Finding]:
        scanner = LogScanner()
        scanner.feed_lines(source, positions.lines_of(text), first_line=start_line + 1)
        return scanner.findings()

    findings = await asyncio.get_running_loop().run_in_executor(ls.pool, run)
    if uri is not None and params.terminal_id is None:
        ls.layers.selections[uri] = diagnostics.build(findings, source, uri, diagnostics.Placer())
        ls.layers.publish(uri)
    return diagnosis_json(findings)


async def diagnose_folder(ls: DenpexServer, folder_uri: str) -> dict[str, Any]:
    """A job folder, read as `denpex diagnose DIR` reads it, in the dump worker: its dumps
    are untrusted pickles, and a folder of any size costs the server one child process,
    bounded by the worker's timeout. The findings are published on the logs' lines."""
    path = to_fs_path(folder_uri)
    if not path or not folder_uri.startswith("file:") or not os.path.isdir(path):
        raise JsonRpcInvalidParams(
            f"denpex.diagnose: folder must be the file: URI of a folder, not {folder_uri!r}"
        )
    ls.notices.log(f"diagnosing the job folder {path} in the dump worker")
    try:
        msg = await run_worker({"folder": path}, FOLDER_TIMEOUT)
        findings = findings_from_json(msg.get("diagnosis"))
    except (WorkerFailed, InputError) as exc:
        # The folder was read and refused (no files, a timeout): a failed request, not bad
        # params; the CLI streams any size and shows why.
        raise JsonRpcInternalError(
            f"denpex.diagnose: {path}: {exc}; run `denpex diagnose {shlex.quote(path)}` "
            "in a terminal"
        ) from None
    for notice in msg.get("notices", []):
        ls.notices.log(str(notice), types.MessageType.Warning)
    loop = asyncio.get_running_loop()
    layer = await loop.run_in_executor(ls.pool, folder_diagnostics, findings, path)
    ls.layers.replace_folder(path, layer)
    ls.notices.log(f"{path}: {len(findings)} finding(s)")
    return diagnosis_json(findings)
