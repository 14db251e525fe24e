"""Train the real-training corpus (bench/trainings) into .cache/trainings/.

python bench/build_trainings.py [--arch gpt2 ...] [--ddp] [--jobs 2] [--list]

The data-parallel runs (trainings/ddp.py) come with every architecture, or with --ddp.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from trainings.corpus import build, corpus, ddp_family
from trainings.models import ARCHS


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", action="append", choices=sorted(ARCHS))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--list", action="store_true", help="list the runs and where they are cached")
    ap.add_argument("--ddp", action="store_true", help="the data-parallel GPT-2 runs too")
    args = ap.parse_args()
    runs = corpus(args.arch or ARCHS)
    if args.ddp or not args.arch:
        runs += ddp_family()
    if args.list:
        for r in runs:
            done = "done" if (r.path / "DONE").exists() else "todo"
            print(f"{done}  {r.spec.arch:6} {r.role:8} {r.label:60} {r.path.name}")
        return 0
    build(runs, args.jobs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
