"""Timestamps of the common log formats, as seconds within a year.

The year is dropped on purpose: syslog and glog lines carry none, and comparing an ISO line
of one file with a syslog line of another is exactly what ordering needs. Every year is
counted with a February 29 (a leap day sorts between February 28 and March 1, and a common
year merely skips it), and ``unwrap`` places a stamp in the year that puts it next to the
job's first stamp, so that January 1 follows the December 31 before it.
"""

from __future__ import annotations

import re

_MONTHS = {
    m: i
    for i, m in enumerate(
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], 1
    )
}
# Days before each month in a leap year: the calendar every stamp is placed on.
_CUMDAYS = (0, 0, 31, 60, 91, 121, 152, 182, 213, 244, 274, 305, 335)
_MONTH_DAYS = (0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
YEAR = 366 * 86400.0

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
            day, hour, minute, second = int(g["d"]), int(g["h"]), int(g["mi"]), int(g["s"])
            if not (1 <= day <= _MONTH_DAYS[month] and hour < 24 and minute < 60 and second < 61):
                continue  # not a time: "E1399 99:00:00" is no stamp to order by
            frac = float("0." + g["f"][:9]) if g.get("f") else 0.0
            return (_CUMDAYS[month] + day) * 86400 + hour * 3600 + minute * 60 + second + frac
    return None


def unwrap(ts: float, reference: float) -> float:
    """``ts`` moved by whole years to within half a year of ``reference`` (the job's first
    stamp): a job runs for days or weeks, so a stamp half a year away from its start is in
    the next (or the previous) year. Idempotent: an unwrapped stamp stays where it is."""
    return ts + YEAR * round((reference - ts) / YEAR)


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
