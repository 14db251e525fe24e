"""``denpex/catalogList`` and ``denpex/catalogEntry``: the failure catalog as data for clients.

The editor renders these fields as they come (a quick pick of entries, the prevention steps
beside a diagnosis, the entry's page); it never parses the Markdown page back into lists.
"""

from __future__ import annotations

from typing import Any

from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer

from denpex import catalog
from denpex.catalog.render import to_markdown
from denpex.errors import InputError
from denpex.lsp.protocol import CATALOG_ENTRY, CATALOG_LIST, CatalogEntryParams


def catalog_list() -> dict[str, Any]:
    """The ``denpex/catalogList`` result: every entry's summary, in `denpex catalog` order."""
    keys = ("id", "title", "category", "tags")
    return {"entries": [{k: e[k] for k in keys} for e in catalog.listing()]}


def catalog_entry(entry_id: str) -> dict[str, Any]:
    """The ``denpex/catalogEntry`` result; InputError for an unknown id."""
    entry = catalog.get(entry_id)
    return {
        "id": entry["id"],
        "title": entry["title"],
        "category": entry["category"],
        "quick_answer": entry["quick_answer"],
        "fix": list(entry["fix"]),
        "prevention": list(entry["prevention"]),
        # Templates with their {placeholders}: filled commands come with each finding.
        "verification": [{"command": v["command"], "why": v["why"]} for v in entry["verification"]],
        "markdown": to_markdown(entry),
    }


def register(server: LanguageServer) -> None:
    @server.feature(CATALOG_LIST)
    def list_entries(ls: LanguageServer, params: Any) -> dict[str, Any]:
        return catalog_list()

    @server.feature(CATALOG_ENTRY)
    def entry(ls: LanguageServer, params: CatalogEntryParams) -> dict[str, Any]:
        try:
            return catalog_entry(params.id)
        except InputError as exc:
            raise JsonRpcInvalidParams(str(exc)) from None
