import { test } from "node:test";
import assert from "node:assert/strict";
import { splitForTransport } from "../../src/core/transport";

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
