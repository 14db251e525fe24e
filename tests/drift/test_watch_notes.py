"""Warnings that callers must recognise carry a kind: ``denpex watch`` groups repeated
incomplete-checkpoint warnings by kind and checkpoint, never by their wording."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
import torch
from safetensors.torch import save_file

from denpex.checkpoints.discover import find_checkpoints
from denpex.commands.watch import _Printer
from denpex.drift.session import Update
from denpex.notes import Note


def _torn(path: Path, size: int) -> None:
    """A safetensors file cut off while being written: its header is not whole."""
    save_file({"w": torch.ones(64)}, str(path))
    path.write_bytes(path.read_bytes()[:size])


def test_an_incomplete_checkpoint_is_noted_as_incomplete(tmp_path: Path) -> None:
    tmp_path = tmp_path / "run"  # pytest's folder name carries a step ("checkpoint_0")
    tmp_path.mkdir()
    save_file({"w": torch.ones(4)}, str(tmp_path / "step_10.safetensors"))
    _torn(tmp_path / "step_20.safetensors", 20)
    warnings: list[str] = []
    found = find_checkpoints(tmp_path, warnings)
    assert [c.step for c in found] == [10]
    [note] = warnings
    assert isinstance(note, Note)
    assert (note.kind, note.subject) == ("incomplete", str(tmp_path / "step_20.safetensors"))
    assert note == str(note) and "step_20" in note  # still plain text for the JSON


def test_watch_tells_each_incomplete_checkpoint_once_whatever_the_wording(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tmp_path = tmp_path / "run"
    tmp_path.mkdir()
    printer = _Printer(io.StringIO(), as_json=False)
    torn = tmp_path / "step_20.safetensors"
    for size in (4, 20, 40):  # the file grows: the reason's wording changes every poll
        _torn(torn, size)
        warnings: list[str] = []
        find_checkpoints(tmp_path, warnings)
        printer.show(str(tmp_path), Update(warnings=warnings))
    other = Note("vanished", str(torn), f"{torn}: gone")
    printer.show(str(tmp_path), Update(warnings=[other, other]))
    told = [line for line in capsys.readouterr().err.splitlines() if line]
    assert len(told) == 2, told
    assert "skipped" in told[0] and told[1].endswith(": gone")
