"""Redaction of text before it leaves the machine (a diagnosis pasted into a ticket or chat).

Training logs carry credentials (tokens, keys, passwords in argument dumps and URLs), the
cluster's host names and addresses, and user names in paths. ``Redactor`` replaces them
with placeholders (``<redacted>``, ``<ip>``, ``<user>``…) and each host with a stable label
(``host-1``, ``host-2``…), so a reader can still tell which ranks shared a machine.

Hosts are found where logs name them (NCCL's ``host:pid:tid [dev]`` prefix, ``host :``
rows, ``srun: error: NAME:``, syslog lines, cluster-internal domain names) and passed in
(the diagnosis's hosts, this machine's name). A host whose name looks like one (a digit,
``-`` or ``.`` in it) is replaced wherever it appears as a word; a plain word such as
``node`` only where a log names a host, so prose keeps its words.

The text is hostile: every pattern is anchored at the start of a run of its first
characters (a negative lookbehind), has no nested unbounded quantifiers, and bounds what it
reads after a fixed prefix, so the work is linear in the line; lines are cut at MAX_LINE.
Host names are looked up in a dict, never compiled into a pattern.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

MAX_LINE = 128 * 1024  # characters; the rest of a longer line is dropped
CUT = " … [line cut]"

# -- credentials ------------------------------------------------------------------------

_PEM_BEGIN = re.compile(r"-----BEGIN ([A-Z0-9 ]{1,64})-----")

# (what the pattern needs in the line, pattern, placeholder): the substring test skips the
# pattern for most lines at the cost of one fast scan.
_TOKENS: list[tuple[str, re.Pattern[str], str]] = [
    ("hf_", re.compile(r"(?<![\w-])hf_[A-Za-z0-9]{16,}"), "<hf-token>"),
    ("_", re.compile(r"(?<![\w-])gh[pousr]_[A-Za-z0-9]{20,}"), "<github-token>"),
    ("github_pat_", re.compile(r"(?<![\w-])github_pat_[A-Za-z0-9_]{20,}"), "<github-token>"),
    ("IA", re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA)[0-9A-Z]{16}(?![A-Za-z0-9])"), "<aws-key-id>"),
    ("sk-", re.compile(r"(?<![\w-])sk-(?:proj-)?[A-Za-z0-9_-]{20,}"), "<api-key>"),
    ("xox", re.compile(r"(?<![\w-])xox[abprs]-[A-Za-z0-9-]{10,}"), "<slack-token>"),
    ("hooks.slack", re.compile(r"https?://hooks\.slack\.com/[^\s\"'<>)]+"), "<slack-webhook>"),
    (
        "/api/webhooks/",
        re.compile(r"https?://(?:[a-z]{1,16}\.)?discord(?:app)?\.com/api/webhooks/[^\s\"'<>)]+"),
        "<discord-webhook>",
    ),
    (
        ".webhook.office.com/",
        re.compile(r"https?://[\w-]{1,63}\.webhook\.office\.com/[^\s\"'<>)]+"),
        "<webhook>",
    ),
]
# Authorization headers, whatever the scheme; a bare "Bearer <token>" too.
_AUTHORIZATION = re.compile(
    r"(?i)(?<![\w-])((?:proxy-)?authorization[\"']?\s{0,4}[:=]\s{0,4}[\"']?)"
    r"(?:(basic|bearer|token|digest|negotiate)\s{1,4})?(?!<)[^\s\"',;]{1,4096}"
)
_BEARER = re.compile(r"(?<![\w-])Bearer\s{1,4}(?!<)[A-Za-z0-9._~+/=-]{8,}")
_JWT = re.compile(r"(?<![\w-])eyJ[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]{4,}\.[A-Za-z0-9_-]*")
# scheme://user:password@ (the host after it is handled with the other hosts).
_URL_CREDENTIALS = re.compile(
    r"(?<![\w+.-])([A-Za-z][A-Za-z0-9+.-]{0,15}://)[^\s/@:]{1,256}:[^\s/@]{1,256}@"
)
# NAME = value, NAME: value, "NAME": "value", NAME='value' (env, YAML, JSON, dict, repr).
_ASSIGNMENT = re.compile(
    r"(?<![\w.-])([\"']?)(-{0,2}[A-Za-z_][\w.-]{0,63})\1(\s{0,4}[:=]\s{0,4})"
    r"(?:([\"'])([^\"'\n]{0,512})\4|(?![<\"'])([^\s\"',;)}\]]{1,512}))"
)
# --name value (argument lists as printed by launchers and argparse errors).
_FLAG = re.compile(
    r"(?<![\w-])(--?[A-Za-z][\w.-]{0,63})(\s{1,4})"
    r"(?:([\"'])([^\"'\n]{0,512})\3|(?![-<\"'])([^\s\"',;)}\]]{1,512}))"
)
# Names whose value is a secret: the last part of the name (hf_token, aws_secret_access_key,
# WANDB_API_KEY, db_password); "max_tokens" or "tokenizer" are not.
_SECRET_NAMES = (
    "token",
    "secret",
    "password",
    "passwd",
    "passphrase",
    "api_key",
    "apikey",
    "access_key",
    "secret_key",
    "private_key",
    "credential",
    "credentials",
    "auth",
    "webhook",
    "webhook_url",
)
# Random-looking base64 runs: an AWS secret access key (40 characters), a PEM body line or
# another key blob (64 or more).
_BLOB = re.compile(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{40,}={0,2}(?![A-Za-z0-9+/=])")

# -- people and places ------------------------------------------------------------------

_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9._%+-]{1,64}@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){1,8}"
)
# /home/NAME, /Users/NAME, /scratch/NAME, /work/NAME, /fsx/NAME, /checkpoint/NAME,
# …/users/NAME (Lustre project trees), /global/homes/a/NAME and /global/u1/a/NAME (NERSC).
_HOME = re.compile(
    r"(/(?:homes/[a-z]|u\d+/[a-z]|home\d*|Users|users|scratch\d*|work|fsx|checkpoint|u)/)"
    r"(?!<)([^/\s:'\"<>]{1,64})"
)
_TILDE = re.compile(r"(?<![\w~/])~([A-Za-z_][\w.-]{0,31})(?=[/\s:'\"]|$)")
_WINDOWS_HOME = re.compile(r"([A-Za-z]:\\Users\\)([^\\\s]{1,64})")
_OCTET = r"(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
_IPV4 = re.compile(rf"(?<![\w.]){_OCTET}(?:\.{_OCTET}){{3}}(?!\.?\d)")
# The full eight-group form, or a form with "::" (timestamps like 12:34:56 never match).
_H = "[0-9A-Fa-f]{1,4}"
_IPV6 = re.compile(
    rf"(?<![\w:])(?:(?:{_H}:){{7}}{_H}|(?:{_H}:){{1,6}}:(?:{_H}(?::{_H}){{0,5}})?"
    rf"|::(?:{_H}:){{0,5}}{_H})(?![\w:])"
)

_NAME = r"[A-Za-z0-9][\w.-]*"
# Where logs name a host (what the line must hold, as written or in capitals; the pattern);
# group 1 is the name.
_HOST_SITES: list[tuple[str, re.Pattern[str]]] = [
    (" [", re.compile(r"(?<![\w.-])([A-Za-z][\w.-]*):\d{1,10}:\d{1,10} \[\d{1,4}\]")),
    ("ost", re.compile(rf"(?i)(?<![\w-])host(?:name)?\s{{0,16}}[:=]\s{{0,4}}({_NAME})")),
    ("srun: ", re.compile(rf"(?<![\w-])srun: (?:error|warning): ({_NAME}):")),
    ("ailure on ", re.compile(rf"(?i)(?<![\w-])node failure on ({_NAME})")),
    (" ON ", re.compile(rf"(?<![\w-])JOB \d{{1,12}} ON ({_NAME}) CANCELLED")),
    (
        " kernel:",
        re.compile(
            r"^(?:[A-Z][a-z]{2} {1,2}\d{1,2} \d\d:\d\d:\d\d|\d{4}-\d\d-\d\dT\S+) "
            rf"({_NAME}) kernel:"
        ),
    ),
    # Cluster-internal names: pod.svc.cluster.local, ip-10-0-1-23.ec2.internal, node.lan.
    (
        ".",
        re.compile(
            r"(?<![\w.-])([A-Za-z0-9][A-Za-z0-9-]{0,62}(?:\.[A-Za-z0-9-]{1,63}){0,10}"
            r"\.(?:local|internal|lan|corp|intranet|localdomain))(?![\w-])"
        ),
    ),
    ("ip-", re.compile(r"(?<![\w.-])(ip-\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3})(?![\w-])")),
]
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9.-]*")
_SPECIFIC = re.compile(r"[\d.-]")
_NOT_HOSTS = {"localhost", "localhost.localdomain"}


def _holds(line: str, needed: str) -> bool:
    return needed in line or needed.upper() in line


def _secret_name(name: str) -> bool:
    key = name.lstrip("-").lower().replace("-", "_").replace(".", "_")
    return key.endswith(_SECRET_NAMES)


def _random_looking(run: str) -> bool:
    body = run.rstrip("=")
    if body.startswith("/") or max(map(len, body.split("/"))) < 16:
        return False  # a path, not a key
    if len(body) != 40 and len(body) < 64:
        return False
    return (
        any(c.isupper() for c in body)
        and any(c.islower() for c in body)
        and any(c.isdigit() for c in body)
    )


def _assignment(m: re.Match[str]) -> str:
    if not _secret_name(m[2]):
        return m[0]
    quote = m[4] or ""
    return f"{m[1]}{m[2]}{m[1]}{m[3]}{quote}<redacted>{quote}"


def _flag(m: re.Match[str]) -> str:
    if not _secret_name(m[1]):
        return m[0]
    quote = m[3] or ""
    return f"{m[1]}{m[2]}{quote}<redacted>{quote}"


def _authorization(m: re.Match[str]) -> str:
    scheme = m[2]
    placeholder = "<credentials>" if (scheme or "").lower() == "basic" else "<token>"
    return f"{m[1]}{scheme + ' ' if scheme else ''}{placeholder}"


def _email(m: re.Match[str]) -> str:
    top = m[0].rsplit(".", 1)[1]
    return "<email>" if len(top) >= 2 and top.isalpha() else m[0]


def redact_secrets(line: str) -> str:
    """Credentials in one line replaced by placeholders."""
    if "://" in line:
        line = _URL_CREDENTIALS.sub(r"\1<credentials>@", line)
    for needed, pattern, placeholder in _TOKENS:
        if needed in line:
            line = pattern.sub(placeholder, line)
    if "uthorization" in line or "UTHORIZATION" in line:
        line = _AUTHORIZATION.sub(_authorization, line)
    if "Bearer" in line:
        line = _BEARER.sub("Bearer <token>", line)
    if "eyJ" in line:
        line = _JWT.sub("<jwt>", line)
    if "=" in line or ":" in line:
        line = _ASSIGNMENT.sub(_assignment, line)
    if "-" in line:
        line = _FLAG.sub(_flag, line)
    return _BLOB.sub(lambda m: "<redacted>" if _random_looking(m[0]) else m[0], line)


def _pem_blocks(text: str) -> str:
    """Each PEM block's body replaced (over any number of lines); a block without its END
    line hides the rest of the text."""
    out: list[str] = []
    pos = 0
    while (m := _PEM_BEGIN.search(text, pos)) is not None:
        out.append(text[pos : m.end()])
        end_marker = f"-----END {m[1]}-----"
        end = text.find(end_marker, m.end())
        out.append("<redacted>")
        if end < 0:
            return "".join(out)
        out.append(end_marker)
        pos = end + len(end_marker)
    out.append(text[pos:])
    return "".join(out)


class Redactor:
    """Redacts texts of one export consistently: ``learn`` every text first (so each host
    has its label wherever it appears), then ``redact`` each."""

    def __init__(self, hosts: Iterable[str] = (), users: Iterable[str] = ()) -> None:
        self._labels: dict[str, str] = {}  # host (and an FQDN's short name) → label
        self._words: dict[str, str] = {}  # what is replaced wherever it is a word
        for host in hosts:
            self.add_host(host)
        for user in users:
            if len(user) >= 3:
                self._words.setdefault(user, "<user>")

    def add_host(self, host: str) -> str:
        host = host.rstrip(".")
        if not host or host.lower() in _NOT_HOSTS or _IPV4.fullmatch(host):
            return host
        short = host.split(".", 1)[0]
        label = self._labels.get(host) or self._labels.get(short)
        if label is None:
            label = f"host-{len(set(self._labels.values())) + 1}"
        for name in (host, short):
            self._labels.setdefault(name, label)
            if len(name) >= 3 and _SPECIFIC.search(name):
                self._words.setdefault(name, label)
        return label

    def learn(self, text: str) -> None:
        """Collect the hosts a text names."""
        for line in text.splitlines():
            line = line[:MAX_LINE]
            for needed, site in _HOST_SITES:
                if _holds(line, needed):
                    for m in site.finditer(line):
                        self.add_host(m[1])

    def redact(self, text: str) -> str:
        if "-----BEGIN " in text:
            text = _pem_blocks(text)
        return "".join(self._line(line) for line in text.splitlines(keepends=True))

    def _line(self, line: str) -> str:
        body = line.rstrip("\r\n")
        ending = line[len(body) :]
        if len(body) > MAX_LINE:
            body = body[:MAX_LINE] + CUT
        body = redact_secrets(body)
        if "@" in body:
            body = _EMAIL.sub(_email, body)
        if "/" in body:
            body = _HOME.sub(r"\1<user>", body)
        if "~" in body:
            body = _TILDE.sub("~<user>", body)
        if ":\\" in body:
            body = _WINDOWS_HOME.sub(r"\1<user>", body)
        for needed, site in _HOST_SITES:
            if _holds(body, needed):
                body = site.sub(self._host_at_site, body)
        if "." in body:
            body = _IPV4.sub("<ip>", body)
        if ":" in body:
            body = _IPV6.sub("<ip>", body)
        if self._words:
            body = _WORD.sub(self._word, body)
        return body + ending

    def _host_at_site(self, m: re.Match[str]) -> str:
        label = self.add_host(m[1])
        start, end = m.span(1)
        return m[0][: start - m.start()] + label + m[0][end - m.start() :]

    def _word(self, m: re.Match[str]) -> str:
        word = m[0]
        found = self._words.get(word) or self._words.get(word.rstrip("."))
        if found:
            return found + word[len(word.rstrip(".")) :] if word.endswith(".") else found
        if "." not in word:
            return word
        # An FQDN of a known host (gpu-7.cluster.internal), or a file named after one
        # (gpu-7.log): replace the longest known prefix, then known parts.
        parts = word.split(".")
        for n in range(min(len(parts), 6), 1, -1):
            label = self._words.get(".".join(parts[:n]))
            if label:
                return ".".join([label, *parts[n:]])
        return ".".join(self._words.get(p, p) for p in parts)


def redact(text: str, hosts: Iterable[str] = (), users: Iterable[str] = ()) -> str:
    """``text`` redacted on its own (hosts learned from it)."""
    redactor = Redactor(hosts, users)
    redactor.learn(text)
    return redactor.redact(text)
