"""A restricted unpickler for the pickles Denpex must read from other machines.

DCP `.metadata` files and Flight Recorder dumps are pickles, and a pickle is a program: its
GLOBAL/STACK_GLOBAL opcodes import any callable and REDUCE calls it. The standard unpickler
would run whatever a hostile file names. This one builds only what the opcodes build by
themselves (dicts, lists, tuples, sets, strings, bytes, numbers, None, bools) and resolves a
global only through the caller's allow-list, which maps ``(module, name)`` to the object to
use. Nothing is ever imported on a pickle's say-so.
"""

from __future__ import annotations

import io
import pickle
from collections.abc import Mapping

from denpex.errors import InputError


class RefusedPickle(InputError):
    """The pickle asked for something outside the allow-list; nothing of it was run."""


def _latin1_bytes(text: str, encoding: str) -> bytes:
    # Protocols 0-2 write bytes as ``_codecs.encode(text, "latin1")``; no other codec is let in.
    if encoding != "latin1" or not isinstance(text, str):
        raise pickle.UnpicklingError("bytes encoded with a codec other than latin1")
    return text.encode("latin1")


# Older protocols name these constructors as globals; each builds plain data and nothing else.
_PLAIN_DATA: Mapping[tuple[str, str], object] = {
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "bytearray"): bytearray,
    ("builtins", "complex"): complex,
    ("_codecs", "encode"): _latin1_bytes,
}


class _Restricted(pickle.Unpickler):
    def __init__(self, data: bytes, allowed: Mapping[tuple[str, str], object], what: str) -> None:
        super().__init__(io.BytesIO(data))
        self._allowed = allowed
        self._what = what

    # EXT1/2/4 opcodes also resolve through find_class, so this is the one door to globals.
    def find_class(self, module: str, name: str) -> object:
        # Protocols 0-2 spell the module Python 2's way; the stock find_class maps it too.
        key = ("builtins" if module == "__builtin__" else module, name)
        if key in _PLAIN_DATA:
            return _PLAIN_DATA[key]
        try:
            return self._allowed[key]
        except KeyError:
            shown = f"{module}.{name}"[:120]
            raise RefusedPickle(
                f"{self._what}: refused a pickle that asks for {shown!r} "
                "(only plain data is read from untrusted pickles)"
            ) from None

    def persistent_load(self, pid: object) -> object:
        raise RefusedPickle(f"{self._what}: refused a pickle with persistent ids")


def loads(
    data: bytes,
    *,
    allowed: Mapping[tuple[str, str], object] | None = None,
    what: str,
) -> object:
    """Unpickle ``data`` admitting only plain data and the allow-listed globals.

    ``what`` names the input in error messages (a path, "DCP metadata", …). A refused global
    raises :class:`RefusedPickle`; a malformed stream raises :class:`InputError`.
    """
    try:
        return _Restricted(data, allowed or {}, what).load()
    except RefusedPickle:
        raise
    except (
        pickle.UnpicklingError,
        EOFError,
        ValueError,
        TypeError,
        AttributeError,
        IndexError,
        KeyError,
        OverflowError,
        MemoryError,
        RecursionError,
    ) as exc:
        # Malformed opcodes surface as any of these; all mean "not a readable pickle".
        raise InputError(f"{what}: not a readable pickle ({type(exc).__name__})") from None
