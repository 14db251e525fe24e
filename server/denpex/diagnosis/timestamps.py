"""Timestamps of the common log formats, as seconds within a year.

The year is dropped on purpose: syslog and glog lines carry none, and comparing an ISO line
of one file with a syslog line of another is exactly what ordering needs.
"""

from __future__ import annotations

import re

_MONTHS = {
    m: i
    for i, m in enumerate(
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1
    )
}
_CUMDAYS = (0, 0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)

# 2024-05-01 12:00:01,123 / 2024-05-01T12:00:01.123Z / [2024-05-01 12:00:01]
_ISO = re.compile(
    r"\d{4}-(?P<mo>\d\d)-(?P<d>\d\d)[T ](?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)(?:[.,](?P<f>\d+))?"
)
# glog: E0501 12:00:01.123456 / [I501 12:00:01] (month without its leading zero)
_GLOG = re.compile(
    r"(?<![A-Za-z0-9])[IWEF](?P<mo>\d{1,2})(?P<d>\d\d) (?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)"
    r"(?:\.(?P<f>\d+))?"
)
# syslog: May  1 12:00:01
_SYSLOG = re.compile(
    r"(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) {1,2}(?P<d>\d{1,2}) "
    r"(?P<h>\d\d):(?P<mi>\d\d):(?P<s>\d\d)"
)


def parse(text: str) -> float | None:
    head = text[:160]  # timestamps sit at the start; never scan a long line for one
    for rx in (_ISO, _GLOG, _SYSLOG):
        m = rx.search(head)
        if m:
            g = m.groupdict()
            month = _MONTHS[g["mon"]] if g.get("mon") else int(g["mo"])
            if not 1 <= month <= 12:
                continue
            day = _CUMDAYS[month] + int(g["d"])
            frac = float("0." + g["f"]) if g.get("f") else 0.0
            return day * 86400 + int(g["h"]) * 3600 + int(g["mi"]) * 60 + int(g["s"]) + frac
    return None


# How far above a line without a time of its own to look for a stamped one.
LOOKBACK_LINES = 12
LOOKBACK_BYTES = LOOKBACK_LINES * 512


def stamp_before(block: bytes, start: int) -> float | None:
    """Timestamp of the nearest stamped line among the few lines above ``start``."""
    end = start - 1
    for _ in range(LOOKBACK_LINES):
        if end < 0:
            return None
        begin = block.rfind(b"\n", max(0, end - 512), end) + 1
        ts = parse(block[begin:end].decode("utf-8", "replace"))
        if ts is not None:
            return ts
        end = begin - 1
    return None
