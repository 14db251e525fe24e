"""Placeholder: replaced by the module's owner."""

import argparse


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = sub.add_parser("catalog", help="(not yet built)")
    p.set_defaults(func=lambda args: 2)
