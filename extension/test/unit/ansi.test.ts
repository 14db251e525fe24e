import { test } from "node:test";
import assert from "node:assert/strict";
import { stripAnsi, cleanTerminalText, TailBuffer, splitForTransport } from "../../src/core/ansi";

test("colours, cursor moves, OSC titles and shell-integration marks are stripped", () => {
  const raw = "\u001b]633;C\u0007\u001b[1;31m[rank3]: RuntimeError\u001b[0m: CUDA error\u001b[K\r\n\u001b]0;title\u001b\\done\u001b]633;D;1\u0007";
  assert.equal(stripAnsi(raw), "[rank3]: RuntimeError: CUDA error\r\ndone");
});

test("carriage-return progress bars keep only their last state", () => {
  assert.equal(cleanTerminalText("step 1/3\rstep 2/3\rstep 3/3\r\nloss 0.1\n"), "step 3/3\nloss 0.1\n");
  assert.equal(cleanTerminalText("bell\u0007 back\u0008space"), "bell backspace");
});

test("TailBuffer keeps the end of a long stream and starts at a line boundary", () => {
  const buf = new TailBuffer(30);
  for (let i = 0; i < 100; i++) buf.push(`line ${i}\n`);
  const text = buf.text();
  assert.ok(text.length <= 30, `kept ${text.length} chars`);
  assert.ok(text.endsWith("line 99\n"));
  assert.ok(text.startsWith("line "), text);
  assert.equal(buf.truncated, true);
});

test("TailBuffer returns everything when under the limit", () => {
  const buf = new TailBuffer(1000);
  buf.push("a\n");
  buf.push("b\n");
  assert.equal(buf.text(), "a\nb\n");
  assert.equal(buf.truncated, false);
  assert.throws(() => new TailBuffer(0), RangeError);
});

test("splitForTransport keeps surrogate pairs whole and loses nothing", () => {
  const s = "ab\u{1F600}cd".repeat(5);
  const parts = splitForTransport(s, 3);
  assert.equal(parts.join(""), s);
  for (const p of parts) {
    assert.ok(p.length <= 3);
    assert.ok(!/[\uD800-\uDBFF]$/.test(p), `part ends inside a pair: ${JSON.stringify(p)}`);
  }
  assert.deepEqual(splitForTransport("short", 10), ["short"]);
});
