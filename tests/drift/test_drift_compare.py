"""The comparison kernel: figures within 1e-6 of float64, localisation, precision, bad pairs."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
import torch
from safetensors.torch import save_file

from denpex.checkpoints import open_checkpoint
from denpex.drift import compare
from denpex.drift.compare import Kernel, compare_readers


def _pair(tmp_path: Path, run: dict[str, torch.Tensor], ref: dict[str, torch.Tensor]):
    save_file(run, str(tmp_path / "run.safetensors"))
    torch.save(ref, tmp_path / "ref.pt")
    return open_checkpoint(tmp_path / "run.safetensors"), open_checkpoint(tmp_path / "ref.pt")


def _expected(a: torch.Tensor, b: torch.Tensor) -> dict[str, float]:
    d = a.double() - b.double()
    return {
        "diff_sq": float((d * d).sum()),
        "ref_sq": float((b.double() ** 2).sum()),
        "max_abs": float(d.abs().max()),
        "mismatched": int((a != b).sum()),
    }


def test_figures_match_float64_reference_across_blocks_and_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    g = torch.Generator().manual_seed(1)
    ref = {
        "w": torch.randn(300, 70, generator=g),
        "v": torch.randn(5000, generator=g),
        "c": torch.randn(6, 5, 4, generator=g),
    }
    run = {k: v + 1e-3 * torch.randn(v.shape, generator=g) for k, v in ref.items()}
    run["w"][7] = ref["w"][7]  # one row identical: mismatched counts must see it
    a, b = _pair(tmp_path, run, ref)
    # Small blocks so every tensor spans many blocks spread over threads.
    monkeypatch.setattr(compare, "BLOCK_ELEMS", 512)
    for threads in (1, 3):
        diff = compare_readers(a, b, 5, Kernel("cpu", threads=threads))
        for t in diff.tensors:
            exp = _expected(run[t.name], ref[t.name])
            assert t.diff_sq == pytest.approx(exp["diff_sq"], rel=1e-6)
            assert t.ref_sq == pytest.approx(exp["ref_sq"], rel=1e-6)
            assert t.max_abs == pytest.approx(exp["max_abs"], rel=1e-6)
            assert t.mismatched == exp["mismatched"]
        assert diff.tensors[-1].mismatched <= 300 * 70 - 70  # row 7 counts nothing


def test_localisation_names_the_row_or_column(tmp_path: Path) -> None:
    g = torch.Generator().manual_seed(2)
    ref = {"col": torch.randn(64, 48, generator=g), "row": torch.randn(64, 48, generator=g)}
    run = {k: v + 1e-7 * torch.randn(v.shape, generator=g) for k, v in ref.items()}
    run["col"][:, 13] += 1e-3
    run["row"][40] += 1e-3
    diff = compare_readers(*_pair(tmp_path, run, ref), 1, Kernel("cpu"))
    by = {t.name: t for t in diff.tensors}
    assert by["col"].top_col == 13 and by["col"].top_col_share > 0.95
    assert by["col"].top_row_share < 0.1
    assert by["row"].top_row == 40 and by["row"].top_row_share > 0.95
    assert (by["row"].rows, by["row"].cols) == (64, 48)


def test_a_share_never_exceeds_the_whole(tmp_path: Path) -> None:
    # All of the difference in one column: the column sums and the row sums add the same
    # squares in different orders, and the column's share came out at 1.0000000014 (the
    # verdict's localisation takes a square root of one minus it).
    g = torch.Generator().manual_seed(0)
    ref = {"w": torch.randn(4096, 8, generator=g)}
    run = {"w": ref["w"].clone()}
    run["w"][:, 3] += torch.randn(4096, generator=g) * 1e-3
    (t,) = compare_readers(*_pair(tmp_path, run, ref), 1, Kernel("cpu")).tensors
    assert t.top_col == 3
    assert 0.999 < t.top_col_share <= 1.0


def test_a_conv_kernels_columns_are_its_input_channels(tmp_path: Path) -> None:
    # Where a difference sits inside a kernel is the model's (the centre tap sees every
    # position): the taps are summed, and a column is an input channel.
    g = torch.Generator().manual_seed(3)
    ref = {"conv": torch.randn(32, 16, 3, 3, generator=g),
           "depthwise": torch.randn(64, 1, 3, 3, generator=g)}  # fmt: skip
    run = {k: v + 1e-7 * torch.randn(v.shape, generator=g) for k, v in ref.items()}
    run["conv"][:, 5] += 1e-3  # every tap of input channel 5
    run["depthwise"][:, 0, 1, 1] += 1e-3  # the centre tap of every channel
    diff = compare_readers(*_pair(tmp_path, run, ref), 1, Kernel("cpu"))
    by = {t.name: t for t in diff.tensors}
    assert (by["conv"].rows, by["conv"].cols) == (32, 16)
    assert by["conv"].top_col == 5 and by["conv"].top_col_share > 0.95
    assert (by["depthwise"].rows, by["depthwise"].cols) == (64, 1)
    assert by["depthwise"].top_row_share < 0.1


def test_torch_kernel_gives_the_numpy_numbers(tmp_path: Path) -> None:
    g = torch.Generator().manual_seed(3)
    ref = {"w": torch.randn(200, 33, generator=g), "h": torch.randn(50, 8, generator=g).bfloat16()}
    run = {
        "w": ref["w"] + 1e-4 * torch.randn(200, 33, generator=g),
        "h": torch.randn(50, 8, generator=g),
    }
    a, b = _pair(tmp_path, run, ref)
    np_diff = compare_readers(a, b, 1, Kernel("cpu"))
    # The CUDA code path run on the CPU: the same torch kernel, device "cpu".
    t_diff = compare_readers(a, b, 1, Kernel("cpu", threads=1, use_torch=True))
    for x, y in zip(np_diff.tensors, t_diff.tensors, strict=True):
        assert x.diff_sq == pytest.approx(y.diff_sq, rel=1e-6)
        assert x.ref_sq == pytest.approx(y.ref_sq, rel=1e-6)
        assert (x.mismatched, x.top_row, x.top_col) == (y.mismatched, y.top_row, y.top_col)
        assert x.compared_dtype == y.compared_dtype


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")
def test_cuda_kernel_gives_the_cpu_numbers(tmp_path: Path) -> None:
    g = torch.Generator().manual_seed(4)
    ref = {"w": torch.randn(512, 300, generator=g), "b": torch.randn(300, generator=g).half()}
    run = {
        "w": ref["w"] + 1e-4 * torch.randn(512, 300, generator=g),
        "b": torch.randn(300, generator=g),
    }
    a, b = _pair(tmp_path, run, ref)
    cpu = compare_readers(a, b, 1, Kernel("cpu"))
    gpu = compare_readers(a, b, 1, Kernel("cuda"))
    for x, y in zip(cpu.tensors, gpu.tensors, strict=True):
        assert x.diff_sq == pytest.approx(y.diff_sq, rel=1e-6)
        assert x.mismatched == y.mismatched


def test_bf16_export_against_fp32_reference_is_rounding_not_drift(tmp_path: Path) -> None:
    g = torch.Generator().manual_seed(5)
    ref = {"w": torch.randn(128, 64, generator=g)}
    export = {"w": ref["w"].bfloat16()}
    diff = compare_readers(*_pair(tmp_path, export, ref), 1, Kernel("cpu"))
    (t,) = diff.tensors
    assert t.compared_dtype == "bfloat16" and t.diff_sq == 0.0 and t.mismatched == 0
    assert any("compared at bfloat16" in w for w in diff.warnings)
    # A real change survives the rounding.
    export["w"][3, 4] += 1.0
    t = compare_readers(*_pair(tmp_path, export, ref), 1, Kernel("cpu")).tensors[0]
    assert t.mismatched == 1 and t.max_abs == pytest.approx(1.0, rel=1e-2)


def test_round_to_bf16_matches_torch() -> None:
    x = np.concatenate(
        [np.random.default_rng(0).standard_normal(10000).astype(np.float32), [np.inf, -0.0]]
    )
    got = compare._round_to_bf16(x)
    want = torch.from_numpy(x).bfloat16().float().numpy()
    np.testing.assert_array_equal(got, want)


def test_mismatched_keys_and_shapes_are_reported_per_tensor(tmp_path: Path) -> None:
    ref = {"a": torch.ones(4, 4), "b": torch.ones(3), "only_ref": torch.ones(2)}
    run = {"a": torch.ones(4, 5), "b": torch.ones(3) * 2, "only_run": torch.ones(2)}
    diff = compare_readers(*_pair(tmp_path, run, ref), 1, Kernel("cpu"))
    status = {t.name: t.status for t in diff.tensors}
    assert status == {
        "a": "shape_mismatch",
        "b": "ok",
        "only_ref": "missing_in_run",
        "only_run": "missing_in_ref",
    }
    assert diff.l2 == pytest.approx(np.sqrt(3.0))  # only b counts
    text = " ".join(diff.warnings)
    assert "different shapes: a" in text and "missing in the run: only_ref" in text


def test_memory_stays_bounded_on_a_torch_file(tmp_path: Path) -> None:
    """Comparing two 96 MB .pt files must not leave them resident in the process: blocks
    are read at their file offsets into reused buffers, nothing is mapped."""
    torch.save({f"t{i}": torch.full((1024, 1024), 1.0) for i in range(24)}, tmp_path / "a.pt")
    torch.save({f"t{i}": torch.full((1024, 1024), 2.0) for i in range(24)}, tmp_path / "b.pt")
    script = textwrap.dedent(
        f"""
        from denpex.checkpoints import open_checkpoint
        from denpex.drift.compare import Kernel, compare_readers

        def peak_mb():  # this process's own high-water mark (ru_maxrss inherits the parent's)
            for line in open("/proc/self/status"):
                if line.startswith("VmHWM"):
                    return int(line.split()[1]) // 1024

        def reset_peak():  # "5" resets VmHWM to the current RSS (Linux >= 4.0)
            with open("/proc/self/clear_refs", "w") as f:
                f.write("5")

        a = open_checkpoint({str(tmp_path / "a.pt")!r})
        b = open_checkpoint({str(tmp_path / "b.pt")!r})
        reset_peak()
        before = peak_mb()
        diff = compare_readers(a, b, 1, Kernel("cpu"))
        assert diff.diff_sq == 24 * 1024 * 1024, diff.diff_sq
        print(peak_mb() - before)
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    # 2 x 96 MB of files; a tensor pair is 8 MB.
    assert int(done.stdout) < 60, (done.stdout, done.stderr)


@pytest.mark.parametrize("scale", [1e-30, 1e22], ids=["squares-underflow", "squares-overflow"])
def test_values_float32_cannot_square_are_summed_in_float64(tmp_path: Path, scale: float) -> None:
    """The float32 sums give way to float64 where squares underflow or overflow float32."""
    g = torch.Generator().manual_seed(9)
    ref = {"w": scale * torch.randn(40, 30, generator=g)}
    run = {"w": ref["w"] * (1 + 1e-3 * torch.randn(40, 30, generator=g))}
    diff = compare_readers(*_pair(tmp_path, run, ref), 1, Kernel("cpu"))
    exp = _expected(run["w"], ref["w"])
    (t,) = diff.tensors
    assert 0 < t.diff_sq < float("inf") and 0 < t.ref_sq < float("inf")
    assert t.diff_sq == pytest.approx(exp["diff_sq"], rel=1e-9)
    assert t.ref_sq == pytest.approx(exp["ref_sq"], rel=1e-9)
