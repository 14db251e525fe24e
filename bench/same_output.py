"""Print every log's full diagnosis, by the CLI's path and by the editor's, one record per log.

Run it with one tree's code and then another's and diff the two outputs: a speed-up must
leave them byte-identical. ``python bench/same_output.py LOG_OR_DIR... > out.jsonl``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from denpex.diagnosis import DumpSet, LogScanner, diagnose_paths
from denpex.diagnosis.report import format_report
from denpex.finding import diagnosis_json
from denpex.lsp.documents import LogDocument


def _logs(args: list[str]) -> list[Path]:
    out: list[Path] = []
    for arg in args:
        p = Path(arg)
        out.extend(sorted(f for f in p.rglob("*") if f.is_file()) if p.is_dir() else [p])
    return out


def main() -> None:
    for path in _logs(sys.argv[1:]):
        scanner = LogScanner()
        findings = diagnose_paths([str(path)], scanner, DumpSet(), look_beside=False)
        text = path.read_bytes().decode("utf-8", "replace")
        doc = LogDocument(f"file://{path}", str(path), text, 1, "utf-16")
        doc.scan()
        record = {
            "log": str(path),
            "cli": format_report(findings),
            "json": diagnosis_json(findings),
            "notices": scanner.notices,
            "editor": diagnosis_json(doc.findings),
        }
        sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
