"""The scanner's fast paths give the answers of the slow ones: an editor's document fed as one
encoded text, anchors found noisy at a log's start searched directly from its first block,
and value series that match only their warm-up lines one by one."""

from __future__ import annotations

import random

from denpex.diagnosis import LogScanner
from denpex.diagnosis import scanner as scanner_module
from denpex.diagnosis.lines import BLOCK_SIZE, MAX_LINE
from denpex.diagnosis.matcher import default_catalog
from denpex.diagnosis.values import ValueSeries, exact_values
from denpex.lsp import positions
from denpex.lsp.documents import LogDocument

OOM = (
    "[rank5]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 5 has "
    "a total capacity of 79.15 GiB of which 1.12 GiB is free.\n"
)
WATCHDOG = (
    "[rank{r}]:[E1202 17:51:01.123456 ProcessGroupNCCL.cpp:632] [Rank {r}] Watchdog caught "
    "collective operation timeout: WorkNCCL(SeqNum=4821, OpType=ALLREDUCE, NumelIn=1, "
    "NumelOut=1, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.\n"
)


def _hf_steps(n: int, seed: int = 3) -> str:
    rng = random.Random(seed)
    return "".join(
        f"[rank{i % 8}]:{{'loss': {2 + rng.random():.4f}, 'grad_norm': {0.5 + rng.random():.6f}, "
        f"'learning_rate': 2.7e-05, 'epoch': {i / 3000:.2f}}}\n"
        for i in range(n)
    )


def _json(scanner: LogScanner) -> list[dict]:
    return [f.to_json() for f in scanner.findings()]


def test_feed_text_equals_feed_lines():
    # Non-ASCII text, a tqdm bar redrawn with "\r", a line over MAX_LINE (fed line by line:
    # it is cut by characters, as feed_lines always cut it) and failures after it.
    text = (
        _hf_steps(2000)
        + "température ✓ 100%|██████████| 10/10\r 50%|█████     | 5/10\n"
        + "é" * (MAX_LINE // 2 + 10)
        + "\n"
        + OOM
        + "".join(WATCHDOG.format(r=r) for r in (0, 1, 2))
    )
    huge = "x" * (BLOCK_SIZE + 10) + "\n" + OOM  # one line longer than a block: not encoded
    for piece in (text[: text.index("température")], text, huge):
        by_lines = LogScanner()
        lines = piece.split("\n")
        lines.pop()
        by_lines.feed_lines("job.log", lines)
        by_text = LogScanner()
        assert by_text.feed_text("job.log", piece) == len(lines)
        assert _json(by_text) == _json(by_lines)
    assert _json(by_text)  # the failures were found


def test_document_breaks_are_line_breaks_for_diagnosis():
    """An editor splits lines at "\\r" and "\\r\\n" too; the document's diagnosis must keep
    the lines (and numbers) the editor shows, as feed_lines(split_lines) did."""
    text = _hf_steps(3000).replace("\n", "\r\n", 500) + "bar 10%\rbar 90%\r" + OOM
    text += "".join(WATCHDOG.format(r=r) for r in (0, 1))
    doc = LogDocument("file:///job.log", "/job.log", text, 1, "utf-16")
    reference = LogScanner()
    reference.feed_lines("/job.log", positions.split_lines(text))
    findings = [f.to_json() for f in doc.scan().findings]
    assert findings == _json(reference)
    assert findings[0]["evidence"][0]["line"] == positions.count_breaks(text) - 2


def test_anchor_noisy_at_the_start_is_searched_directly_from_the_first_block(monkeypatch):
    """Every HF step dict holds "'grad_norm': ", the anchor of the NaN-grad-norm signal: the
    first block's screen searches that signal's pattern itself, and findings do not change."""
    cat = default_catalog()
    unit = next(
        uid for uid, u in enumerate(cat.units) if any("'grad_norm': " in s for s in u.literals)
    )
    healthy = _hf_steps(6000)
    failing = healthy + "[rank3]:{'loss': 2.1, 'grad_norm': nan, 'epoch': 2.0}\n" * 5 + OOM
    block = failing.encode()

    scanner = LogScanner()
    assert unit in scanner._screen_for(block).demoted
    # Not when the anchored pattern itself matches there: that anchor is not noise.
    early = LogScanner()
    assert unit not in early._screen_for(block[-2000:] + block).demoted

    scanner.feed_text("job.log", failing)
    monkeypatch.setattr(scanner_module, "noisy_units", lambda *_: frozenset())
    unprobed = LogScanner()
    unprobed.feed_text("job.log", failing)
    assert _json(scanner) == _json(unprobed)
    assert "nan-inf-loss" in {f["id"] for f in _json(scanner)}


def _reference_jumps(spec, block: bytes) -> list[int]:
    """Each value against the median of the (at most 101) values before it, after warm-up."""
    window: list[float] = []
    out = []
    for seen, (pos, v) in enumerate(exact_values(spec, block, 0)):
        if seen >= spec.warmup:
            med = sorted(window)[(len(window) - 1) // 2]
            if med > 0 and v >= spec.ratio * med:
                out.append(pos)
        window = ([*window, v])[-101:]
    return out


def test_only_warm_up_lines_are_matched_one_by_one(monkeypatch):
    spec = next(v for v in default_catalog().values if v.signal.name == "loss_value")
    steps = [b"step %d loss=%.3f\n" % (i, 2.0 + (i % 7) * 0.01) for i in range(40000)]
    steps[spec.warmup + 3] = b"step x loss=90.0\n"  # right after warm-up, in the same block
    steps[30000] = b"step y loss=95.0\n"
    block = b"".join(steps)
    careful: list[int] = []
    original = ValueSeries._careful

    def spy(self, piece):
        careful.append(len(piece))
        return original(self, piece)

    monkeypatch.setattr(ValueSeries, "_careful", spy)
    found = ValueSeries(spec).jumps(block)
    assert found == _reference_jumps(spec, block)
    assert [block[p : p + 20].count(b"loss=9") for p in found] == [1, 1]
    # The warm-up lines, then the pieces around the two jumps; not a whole first piece.
    assert careful[0] < 2000
