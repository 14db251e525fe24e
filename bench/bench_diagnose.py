"""Benchmark `denpex diagnose` against `grep -E` over the catalog's own patterns.

Generates a healthy multi-rank training log (torchrun --tee prefixes, Megatron-DeepSpeed
style iteration and timer lines, NCCL init, tqdm bars with ANSI colours, warnings,
checkpoint saves) with one failure near the end: a CUDA OOM on rank 5 followed by watchdog
timeouts on the other ranks. Then reports side by side: denpex throughput (the real CLI in
a subprocess), grep -E throughput with every catalog signal pattern (group names stripped),
their ratio on wall-clock and on CPU time (user + system: what a machine shared with other
work does not inflate; --repeat N keeps each tool's best of N), the peak RSS of the denpex
process, and which screen denpex ran (hyperscan when the optional package is installed, else
the regex passes; see docs/diagnosis.md). denpex is timed as an installed copy runs from
its second use on: from bytecode, with its per-machine caches written by an untimed run.

    python bench/bench_diagnose.py            # 1 GB
    python bench/bench_diagnose.py --size-mb 200 --keep /tmp/bench.log
    python bench/bench_diagnose.py --size-mb 300 --also-regex-screen   # both screens
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RANKS = 8
# Relative to the repository, so the bench runs from a checkout without installing.
REPO = Path(__file__).resolve().parent.parent


def write_log(path: Path, size: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    written = 0
    step = 0
    loss = 10.5
    clock = 1_714_564_800  # seconds; only formatted below

    def stamp(t: float) -> str:
        s = int(t) % 86400
        ms = int(t * 1000) % 1000
        return f"2024-05-01 {s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d},{ms:03d}"

    with path.open("w", encoding="utf-8") as out:
        # NCCL initialisation, as each rank prints it once.
        for r in range(RANKS):
            pid = 41000 + r
            for ch in range(24):
                out.write(
                    f"[default{r}]:node-a:{pid}:{pid + 90} [{r}] NCCL INFO Channel {ch:02d}/24 : "
                    f"{r}[{r}] -> {(r + 1) % RANKS}[{(r + 1) % RANKS}] via P2P/CUMEM/read\n"
                )
            out.write(
                f"[default{r}]:node-a:{pid}:{pid + 90} [{r}] NCCL INFO comm 0x5581c0de rank {r} "
                f"nranks {RANKS} cudaDev {r} nvmlDev {r} busId {0x18 + r * 0x10:x}000 "
                f"commId 0x6e2f4a1b9c3d7e55 - Init COMPLETE\n"
            )
        while written < size:
            step += 1
            clock += 0.41
            loss = max(1.9, loss * 0.9993) + rng.random() * 0.03
            t = stamp(clock)
            lines = [
                f"[default0]: iteration {step:8d}/ 500000 | consumed samples: {step * 512:12d} | "
                f"elapsed time per iteration (ms): {405 + rng.random() * 20:.1f} | learning rate: "
                f"3.000E-04 | global batch size:   512 | lm loss: {loss:.6E} | loss scale: 1.0 | "
                f"grad norm: {0.6 + rng.random() * 0.5:.3f} | number of skipped iterations:   0 | "
                f"number of nan iterations:   0 |\n"
            ]
            for r in range(RANKS):
                lines.append(
                    f"[default{r}]:[{t}] [INFO] [timer.py:260:stop] epoch=0/micro_step={step}/"
                    f"global_step={step}, RunningAvgSamplesPerSec={210 + rng.random():.4f}, "
                    f"CurrSamplesPerSec={209 + rng.random() * 3:.4f}, MemAllocated=41.2GB, "
                    f"MaxMemAllocated=52.8GB\n"
                )
            if step % 10 == 0:
                lines.extend(
                    f"[default{r}]:[{t}] [INFO] [logging.py:96:log_dist] [Rank {r}] step={step}, "
                    f"skipped=0, lr=[0.0003], mom=[(0.9, 0.95)]\n"
                    for r in range(RANKS)
                )
            if step % 100 == 0:
                bar = "".join(
                    f"\r\x1b[32mValidation\x1b[0m: {p:3d}%|{'█' * (p // 10):10s}| "
                    f"{p}/100 [00:{p // 4:02d}<00:{(100 - p) // 4:02d}, 4.02it/s]"
                    for p in range(0, 101, 20)
                )
                lines.append(f"[default0]:{bar}\n")
                lines.append(
                    f"[default0]:[{t}] [INFO] validation loss at iteration {step} | "
                    f"lm loss value: {loss + 0.05:.6E} | lm loss PPL: {2.7**loss:.4f} |\n"
                )
            if step % 500 == 0:
                lines.extend(
                    f"[default{r}]:/opt/conda/lib/python3.11/site-packages/torch/utils/"
                    f"checkpoint.py:295: UserWarning: torch.utils.checkpoint: the use_reentrant "
                    f"parameter should be passed explicitly.\n"
                    for r in range(RANKS)
                )
            if step % 2000 == 0:
                where = f"at iteration {step:8d} to /ckpt/run-42"
                lines.append(f"[default0]:[{t}] [INFO] saving checkpoint {where}\n")
                lines.append(f"[default0]:[{t}] [INFO] successfully saved checkpoint {where}\n")
            chunk = "".join(lines)
            out.write(chunk)
            written += len(chunk.encode("utf-8"))
        clock += 3
        t = stamp(clock)
        out.write(
            f"[default5]:[{t}] Traceback (most recent call last):\n"
            f'[default5]:  File "/workspace/pretrain_gpt.py", line 412, in <module>\n'
            f"[default5]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. "
            f"GPU 5 has a total capacity of 79.15 GiB of which 2.31 GiB is free. Of the allocated "
            f"memory 71.02 GiB is allocated by PyTorch, and 3.12 GiB is reserved by PyTorch but "
            f"unallocated.\n"
        )
        t = stamp(clock + 600)
        for r in range(RANKS):
            if r != 5:
                out.write(
                    f"[default{r}]:[rank{r}]:[E501 {t[11:19]}.114000 ProcessGroupNCCL.cpp:616] "
                    f"[Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum="
                    f"{step * 3}, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran "
                    f"for 600050 milliseconds before timing out.\n"
                )


def write_metric_log(path: Path, size: int, seed: int = 11) -> None:
    """A healthy 8-rank log in which nearly every line carries metrics: Megatron iteration
    lines (loss scale, grad norm, nan iterations), HF Trainer step dicts on every rank,
    DeepSpeed loss-scale messages during fp16 calibration, NCCL INFO lines and tqdm bars
    with carriage returns. Same failure at the end as write_log."""
    rng = random.Random(seed)
    written = 0
    step = 0
    loss = 10.5
    scale = 2.0**32
    with path.open("w", encoding="utf-8") as out:
        while written < size:
            step += 1
            loss = max(1.9, loss * 0.9993 + (rng.random() - 0.5) * 0.03)
            hms = f"{step // 3600 % 24:02d}:{step // 60 % 60:02d}:{step % 60:02d}"
            t = f"2024-05-01 {hms},{step % 1000:03d}"
            lines = []
            if step < 25 and step % 3 == 0:  # fp16 scale calibration: healthy overflows
                lines.append(
                    f"[{t}] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 "
                    f"Skipping step. Attempted loss scale: {scale:.0f}, reducing to "
                    f"{scale / 2:.0f}\n"
                )
                scale /= 2
            lines.append(
                f" iteration {step:8d}/  500000 | consumed samples: {step * 512:12d} | elapsed "
                f"time per iteration (ms): {405 + rng.random() * 20:.1f} | learning rate: "
                f"{3e-4 * min(1, step / 2000):.6E} | global batch size:   512 | lm loss: "
                f"{loss:.6E} | "
                f"loss scale: {scale:.1f} | grad norm: {0.6 + rng.random() * 0.5:.3f} | number of "
                f"skipped iterations:   0 | number of nan iterations:   0 |\n"
            )
            for r in range(RANKS):
                lines.append(
                    f"[rank{r}]:{{'loss': {loss + rng.random() * 0.1:.4f}, 'grad_norm': "
                    f"{0.5 + rng.random():.15f}, 'learning_rate': "
                    f"{2.7e-5 * (1 - step / 1e6):.16e}, "
                    f"'epoch': {step / 3000:.2f}}}\n"
                )
            if step % 5 == 0:
                lines.extend(
                    f"node-a:{41000 + r}:{41090 + r} [{r}] NCCL INFO AllReduce: opCount {step:x} "
                    f"sendbuff 0x7f3a2c000000 recvbuff 0x7f3a2c000000 count 1048576 datatype 7 "
                    f"op 0 root 0 comm 0x5581c0de [nranks={RANKS}] stream 0x55820a4e\n"
                    for r in range(RANKS)
                )
            if step % 20 == 0:
                bar = "".join(
                    f"\r{p:3d}%|{'█' * (p // 10):10s}| {step + p}/500000 [01:{p // 4:02d}<"
                    f"99:{(100 - p) // 4:02d}, 2.41it/s, loss={loss:.3f}, grad_norm={0.7:.2f}]"
                    for p in range(0, 101, 10)
                )
                lines.append(bar + "\n")
            chunk = "".join(lines)
            out.write(chunk)
            written += len(chunk.encode("utf-8"))
        out.write(FAILURE)


FAILURE = (
    "[default5]:[2024-05-01 23:59:59,000] Traceback (most recent call last):\n"
    '[default5]:  File "/workspace/pretrain_gpt.py", line 412, in <module>\n'
    "[default5]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. "
    "GPU 5 has a total capacity of 79.15 GiB of which 2.31 GiB is free.\n"
) + "".join(
    f"[default{r}]:[rank{r}]:[E501 23:59:59.114000 ProcessGroupNCCL.cpp:616] [Rank {r}] Watchdog "
    "caught collective operation timeout: WorkNCCL(SeqNum=3, OpType=ALLREDUCE, NumelIn=1, "
    "NumelOut=1, Timeout(ms)=600000) ran for 600050 milliseconds before timing out.\n"
    for r in range(RANKS)
    if r != 5
)


def grep_patterns() -> list[str]:
    sys.path.insert(0, str(REPO / "server"))
    from denpex import catalog

    return [
        re.sub(r"\(\?P<\w+>", "(", sig["pattern"])
        for entry in catalog.entries().values()
        for sig in entry["signals"]
    ]


def warm_up_log(workdir: Path) -> Path:
    """A small log in the benchmark's format, for the untimed first run."""
    path = workdir / "warm-up.log"
    write_metric_log(path, 1 << 20)
    return path


def screen_used(env: dict[str, str]) -> str:
    """The screen `denpex diagnose` runs with: Hyperscan when the package imports (unless
    DENPEX_SCREEN=regex asks for the regex passes), else the regex passes."""
    if env.get("DENPEX_SCREEN") == "regex":
        return "regex"
    probe = [
        sys.executable,
        "-c",
        "from denpex.diagnosis import hyperscreen as h; print(h.available())",
    ]
    out = subprocess.run(probe, capture_output=True, text=True, env=env).stdout
    return "hyperscan" if out.strip() == "True" else "regex"


def outcome(out: str, rc: int) -> str:
    found = re.findall(r'"id": "([a-z0-9-]+)"', out)[:1]
    init = re.search(r'"initiating_rank": (\w+)', out)
    return f"rc={rc} root={found} initiating={init and init.group(1)}"


def timed(
    cmd: list[str], env: dict[str, str] | None = None, repeat: int = 1
) -> tuple[float, float, str, int]:
    """(wall seconds, CPU seconds (user + system), stdout, exit code), each the best of
    ``repeat`` runs. CPU time is what a busy shared machine does not inflate."""
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
    return min(walls), min(cpus), proc.stdout, proc.returncode


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument(
        "--metrics",
        action="store_true",
        help="a log in which nearly every line carries metrics (loss, grad norm, loss scale)",
    )
    ap.add_argument("--keep", type=Path, help="write the log here and keep it")
    ap.add_argument("--repeat", type=int, default=1, help="time each tool N times, keep the best")
    ap.add_argument(
        "--also-utf8-grep",
        action="store_true",
        help="also time grep in a UTF-8 locale (much slower on this log's tqdm bars)",
    )
    ap.add_argument(
        "--also-regex-screen",
        action="store_true",
        help="also time denpex with DENPEX_SCREEN=regex (the screen used without hyperscan)",
    )
    args = ap.parse_args(argv)
    if shutil.which("grep") is None:
        print("grep not found; nothing to compare against", file=sys.stderr)
        return 2
    workdir = Path(tempfile.mkdtemp(prefix="denpex-bench-"))
    try:
        log = args.keep or workdir / "job.log"
        t0 = time.perf_counter()
        (write_metric_log if args.metrics else write_log)(log, args.size_mb << 20)
        size = log.stat().st_size
        took = time.perf_counter() - t0
        kind = "metric-heavy" if args.metrics else "mixed"
        print(f"log: {size / 1e6:.0f} MB {kind}, {RANKS} ranks, generated in {took:.0f} s")
        patterns = workdir / "patterns.txt"
        patterns.write_text("\n".join(grep_patterns()) + "\n", encoding="utf-8")

        denpex = [sys.executable, "-m", "denpex", "diagnose", "--json", str(log)]
        env = {**os.environ, "PYTHONPATH": str(REPO / "server")}
        # Timed as an installed copy runs from its second use on: from bytecode (pip writes
        # it at install; PYTHONDONTWRITEBYTECODE, set on some machines, would have every
        # run compile the sources again) and with its per-machine caches (the catalog's
        # parse and analysis, the compiled screens) written by one untimed run first.
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        subprocess.run([*denpex[:-1], str(warm_up_log(workdir))], capture_output=True, env=env)
        screen = screen_used(env)
        d_time, d_cpu, d_out, d_rc = timed(denpex, env, args.repeat)
        rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        results = [(f"denpex diagnose ({screen})", d_time, d_cpu, outcome(d_out, d_rc))]
        if args.also_regex_screen and screen != "regex":
            r_time, r_cpu, r_out, r_rc = timed(
                denpex, {**env, "DENPEX_SCREEN": "regex"}, args.repeat
            )
            results.append(("denpex diagnose (regex)", r_time, r_cpu, outcome(r_out, r_rc)))
        locales = ["C"] + (["C.UTF-8"] if args.also_utf8_grep else [])
        grep_c = grep_c_cpu = 0.0
        for locale in locales:
            g_env = {**os.environ, "LC_ALL": locale}
            # -c, not -q or >/dev/null: GNU grep stops at the first match when output is void
            grep = ["grep", "-E", "-c", "-f", str(patterns), str(log)]
            g_time, g_cpu, g_out, _ = timed(grep, g_env, args.repeat)
            results.append(
                (f"grep -E -c (LC_ALL={locale})", g_time, g_cpu, f"{g_out.strip()} lines matched")
            )
            if locale == "C":
                grep_c, grep_c_cpu = g_time, g_cpu
        print(f"{'tool':34s} {'seconds':>8s} {'MB/s':>8s} {'cpu s':>7s} {'MB/cpu s':>8s}  notes")
        for name, secs, cpu, note in results:
            mb = size / 1e6
            print(f"{name:34s} {secs:8.2f} {mb / secs:8.1f} {cpu:7.2f} {mb / cpu:8.1f}  {note}")
        for name, secs, cpu, _ in results:
            if name.startswith("denpex"):
                ratio, cpu_ratio = grep_c / secs, grep_c_cpu / cpu
                print(
                    f"{name} / grep -E (LC_ALL=C) throughput: {ratio:.2f}, "
                    f"on CPU time {cpu_ratio:.2f}  (target >= 0.5)"
                )
        print(f"denpex peak RSS: {rss_mb:.0f} MB  (target < 300 MB)")
        print(f"catalog patterns given to grep: {len(grep_patterns())}")
        return 0 if d_rc == 1 else 1
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
