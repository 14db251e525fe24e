"""The server's pure parts: escape stripping across chunk boundaries, LSP position
bookkeeping under edits, settings parsing, the JSON of frames."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import pytest
from lsprotocol import types
from pytest import MonkeyPatch

from denpex.diagnosis.lines import visible_segments
from denpex.lsp import documents, framing, positions
from denpex.lsp.documents import LogDocument
from denpex.lsp.settings import parse
from denpex.lsp.terminals import EscapeStripper

COLOURED = (
    "\x1b]633;A\x07$ \x1b]633;B\x07torchrun train.py\r\n\x1b]633;C\x07"
    "\x1b[1;31m[rank5]: torch.OutOfMemoryError: CUDA out of memory.\x1b[0m\r\n"
    "\x1b[?25l 45%|\x1b[32m████\x1b[0m| 45/100\r\x1b[K 46%|████| 46/100\r\n"
    "\x1bPq#0;2;0;0;0\x1b\\\x1b(Bdone\x07\x1b7\x1b8\r\n"
)
CLEAN = (
    "$ torchrun train.py\r\n"
    "[rank5]: torch.OutOfMemoryError: CUDA out of memory.\r\n"
    " 45%|████| 45/100\r 46%|████| 46/100\r\n"
    "done\r\n"
)


def test_escape_sequences_are_removed_wherever_the_chunks_are_cut() -> None:
    assert EscapeStripper().feed(COLOURED) == CLEAN
    for cut in range(1, len(COLOURED)):
        s = EscapeStripper()
        assert s.feed(COLOURED[:cut]) + s.feed(COLOURED[cut:]) == CLEAN, cut
    for size in (1, 2, 3, 5):
        s = EscapeStripper()
        out = "".join(s.feed(COLOURED[i : i + size]) for i in range(0, len(COLOURED), size))
        assert out == CLEAN


def test_an_unterminated_sequence_is_not_held_forever() -> None:
    s = EscapeStripper()
    out = s.feed("\x1b]0;" + "x" * 5000) + s.feed("after\n")
    assert out.endswith("after\n")


def test_a_saved_log_loses_the_same_escapes_as_the_live_terminal() -> None:
    # One escape grammar: a log file (diagnosis.lines) is cleaned as the terminal it was
    # captured from (lsp.terminals); charset, DCS and save/restore escapes included.
    line = (
        "\x1b(B\x1b[m\x1b[1;31m[rank5]: torch.OutOfMemoryError: CUDA out of memory.\x1b[0m"
        "\x1b7\x1b8\x1bPq#0;2\x1b\\ done"
    )
    assert visible_segments(line.encode()) == [EscapeStripper().feed(line)]
    assert "\x1b" not in visible_segments(line.encode())[0]


def _expected(text: str) -> tuple[int, int]:
    return positions.count_breaks(text), max(positions.last_break_end(text), 0)


def _position(text: str, offset: int) -> types.Position:
    line = positions.count_breaks(text[:offset])
    start = max(positions.last_break_end(text, 0, offset), 0)
    return types.Position(line, positions.units(text[start:offset], "utf-16"))


def test_document_edits_keep_line_bookkeeping_exact() -> None:
    rng = random.Random(7)
    pieces = ["a", "é", "😀", "\n", "\r\n", "\r", "line ", "[rank3]: x\n"]
    text = "start\r\nmid 😀\rend"
    doc = LogDocument("file:///t.log", "/t.log", text, 1, "utf-16")
    for version in range(2, 400):
        # Valid positions never split a \r\n pair or a surrogate pair.
        offsets = [
            i
            for i in range(len(text) + 1)
            if not (0 < i < len(text) and text[i - 1] == "\r" and text[i] == "\n")
        ]
        roll = rng.random()
        if roll < 0.5:
            start = end = len(text)  # an append, the common case for logs
        elif roll < 0.7:
            start, end = rng.choice(offsets), len(text)  # the end rewritten (a reload)
        else:
            start, end = sorted(rng.sample(offsets, 2)) if len(offsets) > 1 else (0, 0)
        insert = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 4)))
        change = types.TextDocumentContentChangePartial(
            range=types.Range(_position(text, start), _position(text, end)), text=insert
        )
        doc.apply(change, version)
        text = text[:start] + insert + text[end:]
        assert doc.text == text
        assert (doc.last_line(), doc._last_start) == _expected(text)


def test_the_first_scan_counts_the_line_breaks_it_feeds(monkeypatch: MonkeyPatch) -> None:
    """A document's breaks are not counted at open: its first scan counts them as it feeds
    the lines, whatever the breaks and wherever the blocks are cut."""
    monkeypatch.setattr(documents, "BLOCK", 7)  # many blocks, cut next to "\r" and "\r\n"
    rng = random.Random(11)
    pieces = ["a", "é", "😀", "\n", "\r\n", "\r", "[rank3]: x", " " * 9]
    texts = ["", "x", "\r", "\n", "a\r\n", "a\rb", "a\n\r", "\r\r\n\n"]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 40))) for _ in range(300)]
    for text in texts:
        doc = LogDocument("file:///t.log", "/t.log", text, 1, "utf-16")
        assert doc.scan().last_line == positions.count_breaks(text), repr(text)
        assert doc.last_line() == positions.count_breaks(text), repr(text)
        # Edited before its first scan: the edit counts them, and the scan keeps that count.
        doc = LogDocument("file:///t.log", "/t.log", text, 1, "utf-16")
        end = _position(text, len(text))
        doc.apply(
            types.TextDocumentContentChangePartial(range=types.Range(end, end), text="y\n"), 2
        )
        assert doc.scan().last_line == doc.last_line() == positions.count_breaks(text + "y\n")


def test_last_break_end_finds_the_last_break_of_any_kind() -> None:
    for text in ("", "ab", "a\nb", "a\rb", "a\r\nb", "a\n\rb", "a\r\nb\r", "\r\n", "a\rb\nc"):
        want = max((i + 1 for i, ch in enumerate(text) if ch in "\r\n"), default=-1)
        assert positions.last_break_end(text) == want, repr(text)
        for start in range(len(text) + 1):
            for end in range(start, len(text) + 1):
                inside = [i + 1 for i in range(start, end) if text[i] in "\r\n"]
                assert positions.last_break_end(text, start, end) == max(inside, default=-1)


def test_settings_shapes_and_problems(tmp_path: Path) -> None:
    nested = parse({"denpex": {"checkpoints": {"watch": ["ck"], "reference": ""}}}, tmp_path)
    dotted = parse({"checkpoints.watch": ["ck"]}, tmp_path)
    assert nested.watch == dotted.watch == (tmp_path / "ck",)
    assert nested.reference is None and not nested.problems
    bad = parse({"drift": {"device": "tpu"}, "logs": {"maxSizeMB": 0}, "extra": 1}, tmp_path)
    assert bad.device == "auto" and bad.max_size_mb == 128
    assert len(bad.problems) == 3
    assert parse("nonsense").problems
    assert not parse(
        {"python": {"interpreter": "/usr/bin/python3"}, "terminal.watch": False}
    ).problems


def _frame_bodies() -> list[bytes]:
    doc = '[rank5]: température ✓ 100%|██████████| 10/10\r\n\t"quoted" \\ path\n' * 3
    message = {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"text": doc}}
    return [
        json.dumps(message, ensure_ascii=False).encode(),  # as editors send it
        json.dumps(message).encode(),  # every non-ASCII character escaped
        b'{"text": "tail \\ud800 end \\udcff"}',  # lone surrogates (an editor's mangled text)
        b'{"x": NaN, "y": -Infinity, "z": 1e400, "w": -0.0}',
        b'{"id": 123456789012345678901234567890, "n": -9223372036854775809}',
        b'{"a": 1, "a": 2}',
        json.dumps({"text": "\U0001f600 ok"}).encode("utf-16"),  # json detects UTF-16
        b"[" * 5000 + b"]" * 5000,
        b'{"bad": "\xff\xfe"}',
        b'{"trailing": 1} x',
        b"",
    ]


def _outcome(body: bytes) -> str:
    try:
        value = framing.parse(body)
    except (ValueError, RecursionError):
        return "refused"
    # repr tells -0.0, NaN and an int from a float apart, which == does not.
    return repr(value) if not isinstance(value, float) or not math.isnan(value) else "nan"


@pytest.mark.parametrize("fast", [True, False], ids=["orjson", "json"])
def test_frames_parse_to_what_the_json_module_gives(fast: bool, monkeypatch: MonkeyPatch) -> None:
    """With orjson (what the server uses when it is installed) or without it, every frame
    body parses to the json module's value, or is refused where the json module refuses
    it: what orjson refuses (lone surrogates, NaN, huge integers, UTF-16) is parsed again."""
    if fast:
        pytest.importorskip("orjson")
    else:
        monkeypatch.setattr(framing, "orjson", None)
    for body in _frame_bodies():
        try:
            expected = repr(json.loads(body))
        except (ValueError, RecursionError):
            expected = "refused"
        assert _outcome(body) == expected, body[:60]
