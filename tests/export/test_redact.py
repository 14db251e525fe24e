"""Redaction of exported diagnoses: every form of credential, host and user name a training
log carries (input → expected output), cost linear in the input, and the CLI's
``denpex diagnose --markdown --redact`` end to end."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from denpex.export.redact import Redactor, redact
from paths import LOGS

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJlc2lnbmF0dXJl"
PEM_BODY = "MIIEowIBAAKCAQEA7bq0R5cXk2kq8lqWv9Y1c0Hq0gq4p3m5yT6QXj8yZ3xN1a2b3c4d"

CASES = [
    # -- tokens with a known shape
    ("HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345", "HF_TOKEN=<hf-token>"),
    ("remote: ghp_0123456789abcdefghijABCDEFGHIJklmnop", "remote: <github-token>"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "<github-token>"),
    ("aws AKIAIOSFODNN7EXAMPLE key", "aws <aws-key-id> key"),
    ("OPENAI: sk-proj-abcdefghijklmnopqrstuvwx", "OPENAI: <api-key>"),
    ("xoxb-1234567890-abcdefghij", "<slack-token>"),
    # -- AWS secret access keys, named and bare
    (f"aws_secret_access_key = {AWS_SECRET}", "aws_secret_access_key = <redacted>"),
    (f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}", "AWS_SECRET_ACCESS_KEY=<redacted>"),
    (f"creds {AWS_SECRET} loaded", "creds <redacted> loaded"),
    # -- named secrets in env, YAML, JSON, dict and Namespace forms
    ("WANDB_API_KEY: 0123456789abcdef0123", "WANDB_API_KEY: <redacted>"),
    ("{'api_key': 'x', 'lr': 0.1}", "{'api_key': '<redacted>', 'lr': 0.1}"),
    ('{"token": "x", "step": 3}', '{"token": "<redacted>", "step": 3}'),
    ("Namespace(hf_token='x', lr=0.1)", "Namespace(hf_token='<redacted>', lr=0.1)"),
    ("password: hunter2", "password: <redacted>"),
    (
        "db.password=hunter2 max_tokens=2048 tokenizer=gpt2",
        "db.password=<redacted> max_tokens=2048 tokenizer=gpt2",
    ),
    # -- command-line secrets
    ("train.py --password x --lr 3e-4", "train.py --password <redacted> --lr 3e-4"),
    ("train.py --hf-token=abc --epochs 3", "train.py --hf-token=<redacted> --epochs 3"),
    # -- HTTP credentials
    (
        "clone https://alice:s3cret@git.example.com/repo.git",
        "clone https://<credentials>@git.example.com/repo.git",
    ),
    ("Authorization: Basic dXNlcjpwYXNz", "Authorization: Basic <credentials>"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.payload.sig", "Authorization: Bearer <token>"),
    ("curl -H 'Authorization: token abc123def'", "curl -H 'Authorization: token <token>'"),
    (f"jwt {JWT}", "jwt <jwt>"),
    # -- webhooks
    ("post https://hooks.slack.com/services/T000/B000/XXXXXXXX", "post <slack-webhook>"),
    ("post https://discord.com/api/webhooks/123/abcDEF", "post <discord-webhook>"),
    # -- PEM blocks, in one line and over several
    (
        f"key=-----BEGIN RSA PRIVATE KEY-----{PEM_BODY}-----END RSA PRIVATE KEY-----",
        "key=-----BEGIN RSA PRIVATE KEY-----<redacted>-----END RSA PRIVATE KEY-----",
    ),
    (
        f"-----BEGIN PRIVATE KEY-----\n{PEM_BODY}\n{PEM_BODY}\n-----END PRIVATE KEY-----\nok",
        "-----BEGIN PRIVATE KEY-----<redacted>-----END PRIVATE KEY-----\nok",
    ),
    (f"  {PEM_BODY}", "  <redacted>"),  # a PEM body line on its own
    # -- addresses
    ("connect to 10.2.3.4:29500 and fe80::1ff:fe23:4567:890a", "connect to <ip>:29500 and <ip>"),
    (
        "at 12:34:56, torch 2.13.0, NCCL 2.21.5+cuda12.4",
        "at 12:34:56, torch 2.13.0, NCCL 2.21.5+cuda12.4",
    ),
    ("mail alice@example.com", "mail <email>"),
    # -- user names in paths
    ("/home/alice/runs/job.log /Users/bob/x", "/home/<user>/runs/job.log /Users/<user>/x"),
    ("C:\\Users\\carol\\y", "C:\\Users\\<user>\\y"),
    ("/lustre/fs1/proj/p42/users/alice/ckpt", "/lustre/fs1/proj/p42/users/<user>/ckpt"),
    ("/fsx/alice/run3", "/fsx/<user>/run3"),
    ("/checkpoint/alice/exp1", "/checkpoint/<user>/exp1"),
    ("cd ~alice/runs", "cd ~<user>/runs"),
    ("/global/homes/a/alice/logs", "/global/homes/a/<user>/logs"),
    ("/global/u1/a/alice/logs", "/global/u1/a/<user>/logs"),
    ("/scratch/alice/x /scratch1/bob/y", "/scratch/<user>/x /scratch1/<user>/y"),
    # -- host names where logs print them, and wherever such a name appears
    ("gpu-node-07:1234:1234 [3] NCCL WARN oops", "host-1:1234:1234 [3] NCCL WARN oops"),
    (
        "srun: error: gpu-node-17: task 3: Exited with exit code 1",
        "srun: error: host-1: task 3: Exited with exit code 1",
    ),
    (
        "slurmstepd: error: *** JOB 4242 ON gpu-node-17 CANCELLED",
        "slurmstepd: error: *** JOB 4242 ON host-1 CANCELLED",
    ),
    ("srun: error: Node failure on gpu-node-3", "srun: error: Node failure on host-1"),
    ("  host      : dgx-14", "  host      : host-1"),
    ("hostname=trainer-3 saved model.safetensors", "hostname=host-1 saved model.safetensors"),
    ("peer trainer-0.trainer.default.svc.cluster.local:29500", "peer host-1:29500"),
    ("ip-10-0-1-23.ec2.internal refused", "host-1 refused"),
    ("master ip-10-0-1-23 up", "master host-1 up"),
    (
        "Dec  4 10:11:12 gpu-node-9 kernel: NVRM: Xid 79\nrank 3 on gpu-node-9, see gpu-node-9.log",
        "Dec  4 10:11:12 host-1 kernel: NVRM: Xid 79\nrank 3 on host-1, see host-1.log",
    ),
    (
        "a:1:1 [0] NCCL x\ngpu-node-07:1:1 [0] NCCL\ngpu-node-08:1:1 [0] NCCL\n"
        "rank 3 on gpu-node-07.",
        "host-1:1:1 [0] NCCL x\nhost-2:1:1 [0] NCCL\nhost-3:1:1 [0] NCCL\nrank 3 on host-2.",
    ),
    # -- a host named like a word is replaced where a log names a host, not in prose
    (
        "hostname=node\nthe node failed; node-local storage",
        "hostname=host-1\nthe node failed; node-local storage",
    ),
    ("localhost:29500 and 127.0.0.1", "localhost:29500 and <ip>"),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0][:40] for c in CASES])
def test_every_form_is_redacted(text: str, expected: str) -> None:
    assert redact(text) == expected


def test_known_hosts_and_users_are_replaced_as_words() -> None:
    r = Redactor(hosts=["gpu-node-07.cluster.internal", "mybox"], users=["alice"])
    text = "rank 3 on gpu-node-07 (gpu-node-07.cluster.internal) by alice on mybox; alicea"
    r.learn(text)
    assert r.redact(text) == "rank 3 on host-1 (host-1) by <user> on mybox; alicea"


def test_a_64k_host_name_and_a_1mb_line_take_milliseconds() -> None:
    huge_host = "a-" * 32768
    started = time.monotonic()
    assert redact(f"  host : {huge_host}\nsee {huge_host}") == "  host : host-1\nsee host-1"
    hostile = [
        "a" * 2**20,
        "a." * 2**19,
        "a:" * 2**19,
        "1." * 2**19,
        "-" * 2**20,
        "a@" * 2**19,
        "/home/" * 2**17,
        "eyJa" * 2**18,
        "ab12" * 2**18,
        "https://x:" * 2**17,
        "--password " * 2**16,
        "x=" * 2**19,
        "ff:" * 2**18,
        "hf_" * 2**18,
    ]
    for line in hostile:
        out = redact(line)
        assert len(out) <= len(line) + 20
    assert time.monotonic() - started < 5.0


def test_patterns_cost_linear_time_within_a_line() -> None:
    """A line of 64 Ki characters (the cut) of each hostile shape: a quadratic pattern would
    take seconds on one of them."""
    for unit in ("a", "a.", "1.", "a@", "eyJa.", "-a", "/u1/", "ff:", "x='", "--a "):
        line = unit * (65536 // len(unit))
        started = time.monotonic()
        redact(line)
        assert time.monotonic() - started < 0.5, unit


def _secret_log() -> str:
    """A real torchelastic failure whose evidence carries a host, a token and an address."""
    text = (LOGS / "elastic_wrong_root_cause.log").read_text().replace("dgx-14", "gpu-node-17")
    leak = '"input_ids" (HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345, MASTER_ADDR=10.2.3.4)'
    return text.replace("'input_ids'", leak)


def _diagnose(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    log = tmp_path / "home" / "alice" / "job.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text(_secret_log())
    return subprocess.run(
        [sys.executable, "-m", "denpex", "diagnose", str(log), *flags],
        capture_output=True,
        text=True,
        env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
        timeout=120,
    )


def test_cli_markdown_export_redacted(tmp_path: Path) -> None:
    plain = _diagnose(tmp_path, "--markdown")
    assert plain.returncode == 1, plain.stderr
    assert plain.stdout.startswith("# Denpex diagnosis")
    assert "gpu-node-17" in plain.stdout and "/home/alice" in plain.stdout

    out = _diagnose(tmp_path, "--markdown", "--redact")
    assert out.returncode == 1, out.stderr
    md = out.stdout
    assert md.startswith("# Denpex diagnosis\n")
    assert "## Python exception on one rank" in md and "**Initiating:** rank 2 on host-1" in md
    for secret in ("gpu-node-17", "10.2.3.4", "alice", "hf_AbCd"):
        assert secret not in md, secret
    assert "HF_TOKEN=<hf-token>, MASTER_ADDR=<ip>" in md
    assert "/home/<user>/job.log:11 [initiating]" in md
    assert "ssh host-1 " in md
    assert md.rstrip().endswith("tokens redacted._")


def test_cli_redact_needs_markdown(tmp_path: Path) -> None:
    out = _diagnose(tmp_path, "--redact")
    assert out.returncode == 2
    assert out.stderr.count("\n") == 1 and "--markdown" in out.stderr
