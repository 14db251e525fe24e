"""Denpex's custom LSP methods and the typed params of those the client sends.

Method names are the ``x-method`` of shared-schema/lsp-*.schema.json. The params of each
client → server method are an attrs class here, structured by pygls' own converter: the
server's protocol (``DenpexProtocol.structure_message``) structures a custom message's params
with ``PARAMS[method]``, and ``workspace/executeCommand denpex.diagnose`` gets its argument
structured from the handler's annotation. A handler therefore receives checked values.

JSON types are checked as sent, by the classes' validators: cattrs alone would turn 5 into
"5" and "no" into True. Wire names are the camelCase of the field names (``terminal_id`` is
``terminalId``), as in lsprotocol. Unknown keys are ignored, as the schemas allow.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, ClassVar

import attrs
import cattrs
from attrs.validators import optional
from lsprotocol import types
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
)

from denpex.errors import InputError
from denpex.finding import Finding, findings_from_json
from denpex.lsp.framing import INVALID_PARAMS, Refusal

log = logging.getLogger(__name__)

# client → server
TERMINAL_DATA = "denpex/terminalData"
TERMINAL_COMMAND_END = "denpex/terminalCommandEnd"
TERMINAL_CLOSED = "denpex/terminalClosed"
CATALOG_LIST = "denpex/catalogList"
CATALOG_ENTRY = "denpex/catalogEntry"
DIAGNOSE_TERMINAL = "denpex/diagnoseTerminal"
GET_STATUS = "denpex/getStatus"
DIAGNOSIS_MARKDOWN = "denpex/diagnosisMarkdown"
COMPARE_CHECKPOINTS = "denpex/compareCheckpoints"
DIAGNOSE = "denpex.diagnose"  # workspace/executeCommand
# server → client
FINDING = "denpex/finding"
DRIFT_UPDATE = "denpex/driftUpdate"
STATUS = "denpex/status"


class BadParams(ValueError):
    """Params that do not fit their method; the message says what was expected."""


@attrs.frozen
class Params:
    """Base of the params classes: ``USAGE`` shows the expected shape in error messages."""

    USAGE: ClassVar[str] = ""


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def _json(kinds: type | tuple[type, ...], what: str) -> Callable[[Any, Any, Any], None]:
    """A validator: the value as sent is one of ``kinds`` (JSON ``what``)."""

    allowed = kinds if isinstance(kinds, tuple) else (kinds,)

    def check(_instance: Any, attribute: attrs.Attribute[Any], value: Any) -> None:
        # JSON true is not a number, though Python's bool is an int.
        if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
            raise BadParams(f"{_camel(attribute.name)} must be {what}")

    return check


def _label(value: Any) -> str | None:
    # A terminal's name is optional and only shown: anything but a non-empty string means
    # "not given" (the server names it "terminal <id>").
    return value if isinstance(value, str) and value else None


def _text(value: Any) -> str | None:
    # A command line is only shown: anything but a string means "not known".
    return value if isinstance(value, str) else None


_terminal_id = _json((str, int), "a string or a number")


@attrs.frozen
class TerminalDataParams(Params):
    USAGE: ClassVar[str] = "{terminalId: string | number, data: string, name?: string}"

    terminal_id: str | int = attrs.field(validator=_terminal_id)
    data: str = attrs.field(validator=_json(str, "a string"))
    name: str | None = attrs.field(default=None, converter=_label)


@attrs.frozen
class TerminalCommandEndParams(Params):
    USAGE: ClassVar[str] = "{terminalId: string | number, name?: string, commandLine?: string}"

    terminal_id: str | int = attrs.field(validator=_terminal_id)
    name: str | None = attrs.field(default=None, converter=_label)
    command_line: str | None = attrs.field(default=None, converter=_text)


@attrs.frozen
class TerminalClosedParams(Params):
    USAGE: ClassVar[str] = "{terminalId: string | number}"

    terminal_id: str | int = attrs.field(validator=_terminal_id)


@attrs.frozen
class DiagnoseTerminalParams(Params):
    USAGE: ClassVar[str] = "{terminalId: string | number}"

    terminal_id: str | int = attrs.field(validator=_terminal_id)


@attrs.frozen
class CatalogEntryParams(Params):
    USAGE: ClassVar[str] = '{"id": <catalog id string>}'

    id: str = attrs.field(validator=_json(str, "a catalog id string"))


def _findings(value: Any) -> list[Finding]:
    try:
        return findings_from_json(value)
    except InputError as exc:
        raise BadParams(f"diagnosis: {exc}") from None


@attrs.frozen
class DiagnosisMarkdownParams(Params):
    USAGE: ClassVar[str] = "{diagnosis, redact: boolean}"

    diagnosis: list[Finding] = attrs.field(converter=_findings)
    redact: bool = attrs.field(validator=_json(bool, "a boolean"))


@attrs.frozen
class CompareCheckpointsParams(Params):
    USAGE: ClassVar[str] = "{run: string, ref: string, noiseRef?: string}"

    run: str = attrs.field(validator=_json(str, "a path string"))
    ref: str = attrs.field(validator=_json(str, "a path string"))
    noise_ref: str | None = attrs.field(
        default=None, validator=optional(_json(str, "a path string"))
    )


@attrs.frozen
class DiagnoseParams(Params):
    """The one argument of ``denpex.diagnose`` (see lsp-diagnose-params.schema.json)."""

    USAGE: ClassVar[str] = "{text?, uri?, range?, terminalId?, folder?}"

    text: str | None = attrs.field(default=None, validator=optional(_json(str, "a string")))
    uri: str | None = attrs.field(default=None, validator=optional(_json(str, "a string")))
    range: types.Range | None = attrs.field(default=None, metadata={"lsp": types.Range})
    terminal_id: str | int | None = attrs.field(default=None, validator=optional(_terminal_id))
    folder: str | None = attrs.field(default=None, validator=optional(_json(str, "a string")))

    def __attrs_post_init__(self) -> None:
        given = (self.text, self.terminal_id, self.folder)
        if all(v is None for v in given) and (self.uri is None or self.range is None):
            raise BadParams("needs text (a string), or uri and range, or terminalId, or folder")


# The params class of each custom client → server method that takes params.
PARAMS: dict[str, type[Params]] = {
    TERMINAL_DATA: TerminalDataParams,
    TERMINAL_COMMAND_END: TerminalCommandEndParams,
    TERMINAL_CLOSED: TerminalClosedParams,
    DIAGNOSE_TERMINAL: DiagnoseTerminalParams,
    CATALOG_ENTRY: CatalogEntryParams,
    DIAGNOSIS_MARKDOWN: DiagnosisMarkdownParams,
    COMPARE_CHECKPOINTS: CompareCheckpointsParams,
}
_TYPED = (*PARAMS.values(), DiagnoseParams)


def _structure(converter: cattrs.Converter, obj: Any, cls: type[Params]) -> Params:
    if not isinstance(obj, dict):
        raise BadParams(f"params must be an object {cls.USAGE}")
    given: dict[str, Any] = {}
    for field in attrs.fields(cls):
        key = _camel(field.name)
        if key not in obj:
            continue
        value = obj[key]
        lsp_type = field.metadata.get("lsp")
        if lsp_type is not None and value is not None:
            try:
                value = converter.structure(value, lsp_type)
            except Exception:  # cattrs' errors list every path; one line is enough here
                raise BadParams(f"{key} must be an LSP {lsp_type.__name__}") from None
        given[field.name] = value
    try:
        return cls(**given)
    except TypeError:  # a required field is missing
        raise BadParams(f"params must be {cls.USAGE}") from None


def _as_sent(obj: dict[str, Any], cls: type) -> Any:
    # Messages for methods without a type (unknown ones; custom ones before their params are
    # structured) keep their params as plain JSON. pygls would build a namedtuple class per
    # JSON object, which costs far more than the object itself on hostile input.
    return cls(**obj)


def converter_factory() -> cattrs.Converter:
    conv: cattrs.Converter = default_converter()
    for cls in (JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage):
        conv.register_structure_hook(cls, _as_sent)
    conv.register_structure_hook_func(lambda t: t in _TYPED, functools.partial(_structure, conv))
    return conv


class TypedParamsProtocol(LanguageServerProtocol):
    """pygls' protocol, giving the custom methods in PARAMS their typed params.

    ``structure_message`` returns a custom method's message with typed params; for a
    request whose params do not fit, a ``framing.Refusal`` (answered with InvalidParams and
    the reason); for such a notification, None (dropped, after ``params_ignored``). Done
    here rather than through ``get_message_type``, which maps a method to one message
    class: a request sent to a notification's method would lose its id and never be
    answered, and a refusal would not say what was wrong.
    """

    def structure_message(self, data: dict[str, Any]) -> Any:
        message = super().structure_message(data)
        cls = PARAMS.get(getattr(message, "method", ""))
        if cls is None:
            return message
        try:
            return attrs.evolve(message, params=self._converter.structure(message.params, cls))
        except Exception as exc:  # hostile params must not stop the loop reading messages
            if not isinstance(exc, BadParams):
                log.exception("params of %s not structured", message.method)
            why = str(exc) if isinstance(exc, BadParams) else "malformed params"
            if isinstance(message, JsonRPCRequestMessage):
                return Refusal(INVALID_PARAMS, f"{message.method}: {why}", message.id)
            self.params_ignored(message.method, why)
            return None

    def params_ignored(self, method: str, why: str) -> None:
        """A notification was dropped because of its params; ``why`` says what was wrong."""
        log.warning("%s: ignored, %s", method, why)
