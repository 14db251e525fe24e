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


def test_memo_index_cannot_make_it_allocate() -> None:
    """LONG_BINPUT 2**31: the C unpickler grows its memo array to that index and zeroes it
    (16 GiB here). In a subprocess capped at 1 GiB of address space, it must still load."""
    import resource
    import struct
    import subprocess
    import sys

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    bomb = b"\x80\x02}r" + struct.pack("<I", 1 << 31) + b"."
    script = f"from denpex import safepickle; print(safepickle.loads({bomb!r}, what='dump'))"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, preexec_fn=cap
    )
    assert (done.returncode, done.stdout) == (0, "{}\n"), done.stderr[-1000:]


def test_bytearray_from_a_count_is_refused() -> None:
    blob = b"\x80\x02c__builtin__\nbytearray\nJ\xff\xff\xff\x7f\x85R."
    with pytest.raises(safepickle.RefusedPickle, match="bytearray from a count"):
        safepickle.loads(blob, what="dump")
    for protocol in range(pickle.HIGHEST_PROTOCOL + 1):
        data = bytearray(b"\x00\xffabc")
        assert safepickle.loads(pickle.dumps(data, protocol=protocol), what="dump") == data


def _allowed_function(x: int = 1) -> int:
    return x


def test_build_cannot_set_attributes_of_an_allowed_global() -> None:
    """BUILD with a slot state runs setattr on the object below it; on an allow-listed
    function that would change it for every later load (its defaults, say)."""
    blob = (
        b"\x80\x02cmod\nf\n"  # the allowed function
        + b"N}X\x0c\x00\x00\x00__defaults__K\x07\x85s\x86b."  # BUILD (None, {...: (7,)})
    )
    with pytest.raises(safepickle.RefusedPickle, match="attributes of a global"):
        safepickle.loads(blob, allowed={("mod", "f"): _allowed_function}, what="dump")
    assert _allowed_function() == 1
