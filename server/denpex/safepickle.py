"""A restricted unpickler for the pickles Denpex must read from other machines.

DCP `.metadata` files and Flight Recorder dumps are pickles, and a pickle is a program: its
GLOBAL/STACK_GLOBAL opcodes import any callable and REDUCE calls it. The standard unpickler
would run whatever a hostile file names. This one builds only what the opcodes build by
themselves (dicts, lists, tuples, sets, strings, bytes, numbers, None, bools) and resolves a
global only through the caller's allow-list, which maps ``(module, name)`` to the object to
use. Nothing is ever imported on a pickle's say-so.

It runs on the pure-Python unpickler, whose memo is a dict: the C one grows its memo array to
any index a LONG_BINPUT names and zeroes it, so nine bytes of pickle (an index of 2**30)
would make it write 16 GB. It also refuses BUILD on an allow-listed global (a class or
function): BUILD sets attributes, and on a global those outlive the pickle.
"""

from __future__ import annotations

import io
import pickle
import struct
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from denpex.errors import InputError


class RefusedPickle(InputError):
    """The pickle asked for something outside the allow-list; nothing of it was run."""


class UnknownGlobal(RefusedPickle):
    """The refusal was a global outside the allow-list (``name``, "module.name")."""

    def __init__(self, message: str, name: str) -> None:
        super().__init__(message)
        self.name = name


def _latin1_bytes(text: str, encoding: str) -> bytes:
    # Protocols 0-2 write bytes as ``_codecs.encode(text, "latin1")``; no other codec is let in.
    if encoding != "latin1" or not isinstance(text, str):
        raise pickle.UnpicklingError("bytes encoded with a codec other than latin1")
    return text.encode("latin1")


class _HostileArguments(Exception):
    """An allowed constructor was called with arguments no real pickle passes it."""


def _bytearray(*args: object) -> bytearray:
    # bytearray(n) allocates and zeroes n bytes: a few bytes of pickle could ask for any size.
    # Pickles only ever build one from its bytes (protocols 3-4) or latin1 text (0-2).
    if not args or isinstance(args[0], (bytes, str)):
        return bytearray(*args)
    raise _HostileArguments("refused a pickle that builds a bytearray from a count")


# Older protocols name these constructors as globals; each builds plain data and nothing else.
_PLAIN_DATA: Mapping[tuple[str, str], object] = {
    ("builtins", "set"): set,
    ("builtins", "frozenset"): frozenset,
    ("builtins", "bytearray"): _bytearray,
    ("builtins", "complex"): complex,
    ("_codecs", "encode"): _latin1_bytes,
}


_STOCK_BUILD: Callable[[Any], None] = pickle._Unpickler.dispatch[pickle.BUILD[0]]


class _Restricted(pickle._Unpickler):
    stack: list[Any]  # the unpickler's value stack (set by load)

    def __init__(
        self,
        data: bytes,
        allowed: Mapping[tuple[str, str], object],
        what: str,
        persistent_load: Callable[[object], object] | None,
    ) -> None:
        super().__init__(io.BytesIO(data))
        self._allowed = allowed
        self._what = what
        self._persistent_load = persistent_load

    def _load_build(self) -> None:
        target = self.stack[-2] if len(self.stack) > 1 else None
        if callable(target):  # an allow-listed class or function, shared by every load
            raise RefusedPickle(f"{self._what}: refused a pickle that sets attributes of a global")
        _STOCK_BUILD(self)

    dispatch: ClassVar[dict[int, Any]] = {
        **pickle._Unpickler.dispatch,
        pickle.BUILD[0]: _load_build,
    }

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
            raise UnknownGlobal(
                f"{self._what}: refused a pickle that asks for {shown!r} "
                "(only plain data is read from untrusted pickles)",
                shown,
            ) from None

    def persistent_load(self, pid: object) -> object:
        if self._persistent_load is None:
            raise RefusedPickle(f"{self._what}: refused a pickle with persistent ids")
        return self._persistent_load(pid)


def loads(
    data: bytes,
    *,
    allowed: Mapping[tuple[str, str], object] | None = None,
    what: str,
    persistent_load: Callable[[object], object] | None = None,
) -> object:
    """Unpickle ``data`` admitting only plain data and the allow-listed globals.

    ``what`` names the input in error messages (a path, "DCP metadata", …). A refused global
    raises :class:`UnknownGlobal`, any other refusal :class:`RefusedPickle`; a malformed
    stream raises :class:`InputError`. ``persistent_load`` resolves persistent ids (refused
    without it); what it raises goes through as raised.
    """
    try:
        return _Restricted(data, allowed or {}, what, persistent_load).load()
    except RefusedPickle:
        raise
    except _HostileArguments as exc:
        raise RefusedPickle(f"{what}: {exc}") from None
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
        struct.error,
    ) as exc:
        # Malformed opcodes surface as any of these; all mean "not a readable pickle".
        raise InputError(f"{what}: not a readable pickle ({type(exc).__name__})") from None
