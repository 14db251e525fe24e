"""The LSP base protocol (``Content-Length`` frames of JSON-RPC) read from an untrusted peer.

pygls' stdio loop trusts its peer: a ``Content-Length`` that is not a number leaves it
reading bodies as headers, a body shorter than its length swallows the next message, and
``Content-Length: 99999999999`` asks for the whole length in one read and kills the
process. Invalid JSON or JSON that is not a JSON-RPC message is only logged, so the client
waits for an answer forever.

Here the stream goes through a buffer that never holds more than one capped frame. Each
frame that cannot be used is answered with a JSON-RPC error (-32700 for bytes that are not
JSON, -32600 for JSON that is not a message, -32602 for a request whose params do not fit
its method), and reading resumes at the next ``Content-Length`` header: the message after
a bad one is served.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, BinaryIO

from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.protocol import JsonRPCProtocol

try:
    import orjson
except ImportError:  # optional (see pyproject.toml): the standard parser alone
    orjson = None  # type: ignore[assignment, unused-ignore]

log = logging.getLogger(__name__)

MAX_BODY = 64 * 2**20  # larger than any log document the server accepts (maxSizeMB is UTF-8)
MAX_HEADER = 4096  # a header block longer than this is not one
BODY_READ = 2**20  # the most one read of a body asks for: memory follows what arrives
HEADER = b"Content-Length:"
_HUGE = float(2**63)  # orjson reads an integer beyond 64 bits as a float at least this large

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602


@dataclass(frozen=True)
class Refusal:
    """A frame or message that gets an error response instead of being handled."""

    code: int
    message: str
    id: int | str | None = None


class FrameReader:
    """Frames from a byte stream, resynchronising on the next header after a bad one."""

    def __init__(
        self,
        read: Callable[[], Awaitable[bytes]],
        read_up_to: Callable[[int], Awaitable[bytes]],
    ) -> None:
        self._read = read  # the next chunk of the stream; b"" at its end
        self._read_up_to = read_up_to  # at most n bytes (a pipe: all n but at its end)
        self._buf = bytearray()

    async def _fill(self) -> bool:
        chunk = await self._read()
        self._buf += chunk
        return bool(chunk)

    async def next(self) -> bytearray | Refusal | None:
        """The next body, a refusal to answer, or None at the end of the stream."""
        while True:
            start = self._buf.find(HEADER)
            if start < 0:
                # Skip what cannot be a header, keeping a tail that may be one cut in two.
                del self._buf[: max(0, len(self._buf) - len(HEADER) + 1)]
                if not await self._fill():
                    return None
                continue
            del self._buf[:start]
            end = self._buf.find(b"\r\n\r\n", 0, MAX_HEADER)
            if end < 0:
                if len(self._buf) >= MAX_HEADER:
                    del self._buf[: len(HEADER)]
                    return Refusal(PARSE_ERROR, "header block without an end")
                if not await self._fill():
                    return None
                continue
            value = bytes(self._buf[len(HEADER) : end]).split(b"\r\n", 1)[0].strip()
            del self._buf[: end + 4]
            if not value.isdigit() or len(value) > 12:
                return Refusal(PARSE_ERROR, f"invalid Content-Length {value[:40]!r}")
            length = int(value)
            if length > MAX_BODY:
                # Not read: the scan for the next header skips the body in bounded chunks.
                return Refusal(
                    INVALID_REQUEST, f"message of {length} bytes refused (limit {MAX_BODY})"
                )
            # The rest of the body in reads of up to 1 MiB that stop at its end, not in
            # 64 KiB chunks: a 10 MB document is 10 round trips through the event loop,
            # not 160, and the buffer then holds the body alone, handed over uncopied.
            while (missing := length - len(self._buf)) > 0:
                chunk = await self._read_up_to(min(missing, BODY_READ))
                if not chunk:
                    return None
                self._buf += chunk
            if len(self._buf) == length:
                body, self._buf = self._buf, bytearray()
                return body
            body = self._buf[:length]
            del self._buf[:length]
            return body

    def resync_within(self, body: bytearray) -> None:
        """A body that failed to parse may have swallowed the start of the next frame
        (its length was too long): read again from the first header inside it."""
        at = body.find(HEADER)
        if at >= 0:
            self._buf[:0] = body[at:]


def _shape_problem(data: Any) -> Refusal | None:
    msg_id = data.get("id") if isinstance(data, dict) else None
    if isinstance(msg_id, bool) or not isinstance(msg_id, (int, str)):
        msg_id = None
    if not isinstance(data, dict):
        return Refusal(INVALID_REQUEST, "a message must be a JSON object (no batches in LSP)")
    if data.get("jsonrpc") != "2.0":
        return Refusal(INVALID_REQUEST, 'a message needs "jsonrpc": "2.0"', msg_id)
    if "id" in data and data["id"] is not None and msg_id is None:
        return Refusal(INVALID_REQUEST, "id must be an integer or a string")
    if "method" in data:
        if not isinstance(data["method"], str):
            return Refusal(INVALID_REQUEST, "method must be a string", msg_id)
        if "params" in data and not isinstance(data["params"], (dict, list)):
            return Refusal(INVALID_REQUEST, "params must be an object or an array", msg_id)
        return None
    if "id" in data and ("result" in data or "error" in data):
        return None  # a response to one of the server's requests
    return Refusal(INVALID_REQUEST, "neither a request, a notification nor a response", msg_id)


def parse(body: bytes | bytearray) -> Any:
    """The JSON of a frame. orjson parses the bytes as they are, twice as fast as the
    standard parser on a 10 MB document (which first decodes the whole body into a string,
    slowly when it holds non-ASCII text, as editors send it). What orjson refuses (a lone
    surrogate, NaN) or reads differently (an integer beyond 64 bits becomes a float) is
    parsed again by the standard parser: every message gets its verdict and values."""
    if orjson is not None:
        try:
            value = orjson.loads(body)
        except orjson.JSONDecodeError:
            pass
        else:
            if not _has_huge_float(value):
                return value
    return json.loads(body)


def _has_huge_float(value: Any) -> bool:
    """Whether a float of 2**63 or more (or NaN) is in ``value``: where orjson may have read
    an integer as a float. A message has a handful of values; a large document is one."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, float) and not -_HUGE < item < _HUGE:
            return True
    return False


def decode(body: bytes | bytearray, protocol: JsonRPCProtocol) -> Any:
    """The structured message, a Refusal, or None (a notification to drop)."""
    try:
        data = parse(body)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
        return Refusal(PARSE_ERROR, f"parse error: {str(exc)[:200]}")
    problem = _shape_problem(data)
    if problem is not None:
        return problem
    try:
        # pygls uses this as json's object_hook; only the top level carries "jsonrpc".
        return protocol.structure_message(data)
    except JsonRpcException:
        method = data.get("method")
        if "id" in data and method is not None:
            return Refusal(INVALID_PARAMS, f"invalid params for {method}", data["id"])
        log.warning("dropped a malformed %s message", method or "response")
        return None


def answer(protocol: JsonRPCProtocol, refusal: Refusal) -> None:
    log.warning("refused a message: %s", refusal.message)
    error = {"code": refusal.code, "message": refusal.message}
    protocol._send_data({"jsonrpc": "2.0", "id": refusal.id, "error": error})


async def serve(reader: FrameReader, protocol: JsonRPCProtocol, stop: threading.Event) -> None:
    """pygls' ``run_async`` with the defences above."""
    while not stop.is_set():
        frame = await reader.next()
        if frame is None:
            return
        if isinstance(frame, Refusal):
            answer(protocol, frame)
            continue
        message = decode(frame, protocol)
        if isinstance(message, Refusal):
            if message.code == PARSE_ERROR:
                reader.resync_within(frame)
            answer(protocol, message)
        elif message is not None:
            try:
                protocol.handle_message(message)
            except Exception:
                log.exception("unable to handle a message")


def serve_stdio(
    protocol: JsonRPCProtocol,
    threads: ThreadPoolExecutor,
    stdin: BinaryIO,
    stdout: BinaryIO,
    stop: threading.Event,
) -> None:
    """pygls' stdio loop with the defences above, until ``stop`` is set or stdin ends.
    Reads block, so they run on ``threads``."""
    read_chunk = getattr(stdin, "read1", stdin.read)
    protocol.set_writer(StdoutWriter(stdout))

    async def main() -> None:
        loop = asyncio.get_running_loop()
        reader = FrameReader(
            lambda: loop.run_in_executor(threads, read_chunk, 1 << 16),
            lambda n: loop.run_in_executor(threads, stdin.read, n),
        )
        await serve(reader, protocol, stop)

    try:
        asyncio.run(main())
    except BrokenPipeError:
        log.error("connection to the client lost; shutting down")
    except (KeyboardInterrupt, SystemExit):
        pass
