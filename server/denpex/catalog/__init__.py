"""The failure catalog: one TOML data file per entry under ``entries/``.

Entries are data (validated against shared-schema/catalog-entry.schema.json by the tests);
this module only loads them and fills the templated verification commands.
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from denpex.catalog import parsed_cache
from denpex.errors import InputError

Entry = dict[str, Any]

_PLACEHOLDER = re.compile(r"\{(\w+)\}")


@cache
def entries() -> dict[str, Entry]:
    """All entries by id, loaded once per process."""
    folder = resources.files("denpex.catalog") / "entries"
    files = [
        (item.name, item.read_bytes())
        for item in sorted(folder.iterdir(), key=lambda p: p.name)
        if item.name.endswith(".toml")
    ]

    def parse() -> dict[str, Entry]:
        import tomllib  # only when the cache misses: its import is part of the start-up saved

        out: dict[str, Entry] = {}
        for _, data in files:
            entry = tomllib.loads(data.decode("utf-8"))
            out[entry["id"]] = entry
        return out

    return parsed_cache.load(files, parse)


def get(entry_id: str) -> Entry:
    try:
        return entries()[entry_id]
    except KeyError:
        raise InputError(f"unknown catalog entry: {entry_id!r} (see `denpex catalog`)") from None


def listing() -> list[Entry]:
    """Every entry grouped by category (related failures sit together), ids sorted within:
    the order of `denpex catalog` and of the language server's ``denpex/catalogList``."""
    return sorted(entries().values(), key=lambda e: (e["category"], e["id"]))


@dataclass(frozen=True)
class Command:
    """A verification command filled for one finding."""

    text: str
    # Safe to run as shown: every blank filled, each value passed its check. Otherwise the
    # command is shown for the user to complete or check, never offered to run as is.
    runnable: bool


def fill_template(template: str, values: Mapping[str, object]) -> Command:
    """Fill {name} placeholders with shell-quoted values. Values come from log text and file
    names that someone else wrote, so each is quoted (``shlex.quote``) and checked for what
    its placeholder stands for; an unknown or unfit value leaves the command not runnable,
    and an unknown one stays visible as <name> for the user to fill."""
    runnable = _BLANK.search(template) is None  # "<checkpoint dir>": the user fills it

    def sub(m: re.Match[str]) -> str:
        nonlocal runnable
        name, value = m.group(1), values.get(m.group(1))
        if value is None:
            runnable = False
            return f"<{name}>"
        word, ok = shell_word(name, value)
        runnable = runnable and ok
        return word

    text = _PLACEHOLDER.sub(sub, template)
    return Command(text, runnable)


def verification_commands(entry: Entry, values: Mapping[str, object]) -> list[Command]:
    return [fill_template(v["command"], values) for v in entry["verification"]]


# What each placeholder stands for decides the check its value must pass.
_NUMBERS = frozenset({"rank", "gpu", "pid", "step"})
_HOSTS = frozenset({"host"})
_PATHS = frozenset({"log", "run", "ref"})
_BLANK = re.compile(r"<[A-Za-z][^<>]*>")
# RFC 1123 names (labels of letters, digits, hyphens; underscores, which cluster node names
# use, allowed inside) and dotted IPv4. A leading "-" would be read as an ssh option.
_HOSTNAME = re.compile(
    r"[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9])?)*"
)
_MAX_HOST = 253
_MAX_PATH = 4096
_MAX_DIGITS = 18
# Control, format (bidi overrides, zero-width) and line/paragraph separators: they can
# end a command early or make the shown text differ from what the shell runs.
_UNPRINTABLE = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})


def shell_word(name: str, value: object) -> tuple[str, bool]:
    """(``value`` as one shell word, whether it passed the check for ``name``). The word
    never holds a raw newline or control character: such a value is written in bash's
    $'...' form, so the command stays one line whatever the log held."""
    text = value if isinstance(value, str) else str(value)
    if any(unicodedata.category(c) in _UNPRINTABLE for c in text):
        return _ansi_c_quote(text), False
    if name in _NUMBERS:
        ok = 0 < len(text) <= _MAX_DIGITS and text.isascii() and text.isdigit()
    elif name in _HOSTS:
        ok = len(text) <= _MAX_HOST and _HOSTNAME.fullmatch(text) is not None
    else:  # paths, and any placeholder a new entry adds
        ok = 0 < len(text) <= _MAX_PATH
        if name in _PATHS and text.startswith("-"):
            text = "./" + text  # never read as an option of grep or denpex
    return shlex.quote(text), ok


def _ansi_c_quote(text: str) -> str:
    """bash's $'...' quoting, with every unprintable character as an escape."""
    out = []
    for c in text:
        if c in "\\'":
            out.append("\\" + c)
        elif unicodedata.category(c) in _UNPRINTABLE:
            code = ord(c)
            out.append(f"\\x{code:02x}" if code < 0x80 else f"\\U{code:08x}")
        else:
            out.append(c)
    return "$'" + "".join(out) + "'"
