"""Run every benchmark in bench/ in turn (`make bench`). Each prints its own side-by-side table.

Benchmarks are run on demand, never by the test suite: they write gigabytes and take minutes.
Pass names to run a subset: `python bench/run_all.py bench_diagnose false_alarms`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    # build_*.py only prepare data (the benchmarks build what they need themselves).
    scripts = sorted(
        p
        for p in HERE.glob("*.py")
        if p.name != Path(__file__).name and not p.stem.startswith("build_")
    )
    if argv:
        scripts = [p for p in scripts if p.stem in argv]
    failed = 0
    for script in scripts:
        print(f"\n=== {script.stem} ===", flush=True)
        failed += subprocess.call([sys.executable, str(script)]) != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
