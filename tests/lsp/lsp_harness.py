"""Harness: a real ``denpex serve`` over stdio, driven by pytest-lsp's client.

Custom notifications are recorded with their params as plain JSON (pygls would hand them
over as namedtuples) so the tests can validate the traffic against shared-schema/.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Union

from jsonschema import Draft202012Validator
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from referencing import Registry, Resource

from denpex.lsp.protocol import converter_factory
from paths import SCHEMAS

CUSTOM = ("denpex/finding", "denpex/driftUpdate", "denpex/status")
TIMEOUT = 20.0


def _registry() -> Registry:
    resources = []
    for path in sorted(SCHEMAS.glob("*.schema.json")):
        doc = json.loads(path.read_text())
        resources.append((doc["$id"], Resource.from_contents(doc)))
    return Registry().with_resources(resources)


REGISTRY = _registry()


def validate(schema_file: str, instance: Any, ref: str = "") -> None:
    """Validate against shared-schema/<schema_file> (optionally one of its $defs)."""
    base = json.loads((SCHEMAS / schema_file).read_text())
    schema = {"$ref": base["$id"] + ref} if ref else base
    Draft202012Validator(schema, registry=REGISTRY).validate(instance)


class _Timed:
    """The client's request methods, each bounded by TIMEOUT (a stuck server fails the
    test instead of hanging it)."""

    def __init__(self, client: LanguageClient) -> None:
        self._client = client

    def __getattr__(self, name: str) -> Callable[..., Any]:
        method = getattr(self._client, name)

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await asyncio.wait_for(method(*args, **kwargs), TIMEOUT)

        return call


class Session:
    """A started, initialized server and what it has sent."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.timed = _Timed(client)
        self.custom: dict[str, list[Any]] = {m: [] for m in CUSTOM}
        for method in CUSTOM:
            client.feature(method)(self._recorder(method))

    def _recorder(self, method: str) -> Callable[[Any, Any], None]:
        def record(ls: Any, params: Any) -> None:  # pygls injects the client as `ls`
            self.custom[method].append(params)

        return record

    @property
    def pid(self) -> int:
        assert self.client._server is not None
        return self.client._server.pid

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = TIMEOUT) -> Any:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = predicate()
            if value:
                return value
            await asyncio.sleep(0.02)
        raise AssertionError(
            f"timed out after {timeout}s waiting for {predicate.__doc__ or predicate}"
        )

    async def diagnostics_for(
        self, uri: str, check: Callable[[list[types.Diagnostic]], bool]
    ) -> list[types.Diagnostic]:
        """The latest diagnostics published for ``uri`` once they satisfy ``check``."""

        def ready() -> tuple[list[types.Diagnostic]] | None:
            diags = self.client.diagnostics.get(uri)
            # Wrapped in a tuple: an empty list is a valid (and awaited) answer.
            return (list(diags),) if diags is not None and check(list(diags)) else None

        return (await self.wait_for(ready))[0]

    def open(self, uri: str, text: str, language_id: str = "log", version: int = 1) -> None:
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=uri, language_id=language_id, version=version, text=text
                )
            )
        )

    async def request(self, method: str, params: Any) -> Any:
        return await asyncio.wait_for(
            self.client.protocol.send_request_async(method, params), TIMEOUT
        )

    async def status(self) -> dict[str, Any]:
        result = await self.request("denpex/getStatus", {})
        validate("lsp-status.schema.json", result)
        return result


def _command_or_action(obj: Any, _type: Any) -> types.Command | types.CodeAction:
    # lsprotocol's client-side converter reads a CodeAction whose `command` is an object as
    # a Command with that object stringified; a Command's `command` is always a string.
    if isinstance(obj.get("command"), str):
        return CONVERTER.structure(obj, types.Command)
    return CONVERTER.structure(obj, types.CodeAction)


CONVERTER = converter_factory()
CONVERTER.register_structure_hook(Union[types.Command, types.CodeAction], _command_or_action)  # noqa: UP007


def raw_client() -> LanguageClient:
    from pytest_lsp.client import register_lsp_features

    client = LanguageClient(converter_factory=lambda: CONVERTER)
    register_lsp_features(client)
    return client


async def start(
    tmp_path: Path,
    settings: dict[str, Any] | None = None,
    *,
    args: tuple[str, ...] = (),
    capabilities: str = "visual-studio-code",
) -> Session:
    client = raw_client()
    session = Session(client)
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "PYTHONUNBUFFERED": "1"}
    await client.start_io(sys.executable, "-m", "denpex", "serve", *args, env=env)
    client.set_configuration(settings or {}, section="denpex")
    params = types.InitializeParams(
        capabilities=client_capabilities(capabilities),
        workspace_folders=[types.WorkspaceFolder(uri=tmp_path.as_uri(), name="ws")],
        root_uri=tmp_path.as_uri(),
    )
    await asyncio.wait_for(client.initialize_session(params), TIMEOUT)
    return session


async def stop(session: Session, blocked: int = 0) -> None:
    """End the session; first check that the guard refused exactly ``blocked`` network
    operations (0 unless the test provoked one): no feature may touch the network."""
    status = await session.status()
    assert status["blockedConnections"] == blocked, status
    await asyncio.wait_for(session.client.shutdown_session(), TIMEOUT)
    await session.client.stop()
