"""The restricted unpickler: plain data in, every global refused unless allow-listed."""

from __future__ import annotations

import copyreg
import os
import pickle
from collections import OrderedDict
from pathlib import Path

import pytest

from denpex import safepickle
from denpex.errors import InputError


class _Payload:
    """Pickles as a call to os.system: what a hostile dump or .metadata would carry."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_plain_data_round_trips(protocol: int) -> None:
    data = {"version": "2.10", "entries": [{"seq": 3, "sizes": [[4, 4]], "ok": True}], "n": None}
    data["tuple"] = (1.5, b"\x00\xff", "x" * 300, frozenset({1}), {2, 3})  # type: ignore[assignment]
    assert safepickle.loads(pickle.dumps(data, protocol=protocol), what="dump") == data


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_code_executing_pickle_is_refused_and_never_runs(tmp_path: Path, protocol: int) -> None:
    marker = tmp_path / "PWNED"
    blob = pickle.dumps({"entries": [_Payload(marker)]}, protocol=protocol)
    with pytest.raises(safepickle.RefusedPickle, match=r"(posix|os)\.system"):
        safepickle.loads(blob, what="dump")
    assert not marker.exists()


def test_extension_registry_cannot_smuggle_a_global(tmp_path: Path) -> None:
    copyreg.add_extension("os", "system", 0x7FFF00)
    try:
        blob = pickle.dumps(os.system, protocol=2)
    finally:
        copyreg.remove_extension("os", "system", 0x7FFF00)
    with pytest.raises(safepickle.RefusedPickle):
        safepickle.loads(blob, what="dump")


def test_allow_listed_global_is_used() -> None:
    blob = pickle.dumps(OrderedDict(a=1), protocol=2)
    allowed = {("collections", "OrderedDict"): OrderedDict}
    assert safepickle.loads(blob, allowed=allowed, what="meta") == OrderedDict(a=1)
    with pytest.raises(safepickle.RefusedPickle, match="meta"):
        safepickle.loads(blob, what="meta")


def test_persistent_ids_are_refused() -> None:
    class WithPid(pickle.Pickler):
        def persistent_id(self, obj: object) -> object:
            return "storage" if obj == "x" else None

    import io

    buf = io.BytesIO()
    WithPid(buf, protocol=2).dump(["x"])
    with pytest.raises(safepickle.RefusedPickle, match="persistent"):
        safepickle.loads(buf.getvalue(), what="dump")


@pytest.mark.parametrize("blob", [b"", b"\x80\x05", b"garbage", b"\x80\x02}q\x00(X\x01"])
def test_malformed_stream_is_an_input_error(blob: bytes) -> None:
    with pytest.raises(InputError, match="not a readable pickle"):
        safepickle.loads(blob, what="dump")
