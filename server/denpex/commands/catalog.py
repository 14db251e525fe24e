"""`denpex catalog [ID] [--json]`: list the failure catalog or show one entry as a page."""

from __future__ import annotations

import argparse
import json
import sys

from denpex import catalog
from denpex.catalog.render import to_markdown


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "catalog",
        help="list the failure catalog, or show one entry",
        description="Without ID: list every entry (id, category, title). With ID: show the "
        "entry's full page (mechanism, symptoms, fix, prevention, verification commands).",
    )
    p.add_argument("id", nargs="?", help="entry id to show, e.g. nccl-timeout")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.id is None:
        _list(as_json=args.json)
    else:
        entry = catalog.get(args.id)  # unknown id: InputError, exit 2 with one line
        if args.json:
            sys.stdout.write(json.dumps(entry, indent=2, ensure_ascii=False) + "\n")
        else:
            sys.stdout.write(to_markdown(entry))
    return 0


def _list(*, as_json: bool) -> None:
    rows = catalog.listing()
    if as_json:
        summary = [{k: e[k] for k in ("id", "title", "category", "tags")} for e in rows]
        sys.stdout.write(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
        return
    table = [("ID", "CATEGORY", "TITLE")] + [(e["id"], e["category"], e["title"]) for e in rows]
    id_width = max(len(r[0]) for r in table)
    cat_width = max(len(r[1]) for r in table)
    for entry_id, category, title in table:
        sys.stdout.write(f"{entry_id:<{id_width}}  {category:<{cat_width}}  {title}\n")
