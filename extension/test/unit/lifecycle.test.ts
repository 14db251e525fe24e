import { test } from "node:test";
import assert from "node:assert/strict";
import { SerialRunner, CrashPolicy, needsRestart } from "../../src/core/lifecycle";

function deferred() {
  let resolve!: () => void;
  let reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

test("restarts: one in flight, any number of requests meanwhile collapse into one queued run", async () => {
  const gates: ReturnType<typeof deferred>[] = [];
  let started = 0;
  const runner = new SerialRunner(() => {
    started++;
    const d = deferred();
    gates.push(d);
    return d.promise;
  });
  const first = runner.run();
  const queued = [runner.run(), runner.run(), runner.run()];
  assert.equal(started, 1);
  assert.equal(queued[0], queued[1]);
  gates[0].resolve();
  await first;
  await new Promise((r) => setImmediate(r));
  assert.equal(started, 2, "the queued run starts after the first");
  gates[1].resolve();
  await Promise.all(queued);
  assert.equal(started, 2, "three requests while busy cost one extra run");
  assert.equal(runner.busy, false);
});

test("a failed run does not wedge the runner", async () => {
  let calls = 0;
  const runner = new SerialRunner(async () => {
    calls++;
    if (calls === 1) throw new Error("boom");
  });
  await assert.rejects(runner.run(), /boom/);
  await runner.run();
  assert.equal(calls, 2);
});

test("crash backoff doubles, notifies once per burst and gives up after too many crashes", () => {
  const policy = new CrashPolicy({
    baseMs: 100,
    maxMs: 1000,
    windowMs: 60_000,
    maxCrashesInWindow: 4,
  });
  const decisions = [0, 1, 2, 3, 4].map((i) => policy.onCrash(1000 + i));
  assert.deepEqual(decisions.slice(0, 4), [
    { action: "restart", delayMs: 100, notify: true },
    { action: "restart", delayMs: 200, notify: false },
    { action: "restart", delayMs: 400, notify: false },
    { action: "restart", delayMs: 800, notify: false },
  ]);
  assert.deepEqual(decisions[4], { action: "give-up", notify: false });
  policy.reset();
  assert.deepEqual(policy.onCrash(5000), { action: "restart", delayMs: 100, notify: true });
});

test("crashes outside the window are forgotten and the delay is capped", () => {
  const policy = new CrashPolicy({ baseMs: 400, maxMs: 1000, windowMs: 10, maxCrashesInWindow: 2 });
  policy.onCrash(0);
  const later = policy.onCrash(100);
  assert.equal(later.action, "restart");
  const capped = new CrashPolicy({
    baseMs: 400,
    maxMs: 1000,
    windowMs: 1e9,
    maxCrashesInWindow: 10,
  });
  const delays = [0, 1, 2, 3]
    .map((t) => capped.onCrash(t))
    .map((d) => (d.action === "restart" ? d.delayMs : -1));
  assert.deepEqual(delays, [400, 800, 1000, 1000]);
});

test("only interpreter and glob changes restart the server", () => {
  assert.equal(
    needsRestart((s) => s === "denpex.python.interpreter"),
    true,
  );
  assert.equal(
    needsRestart((s) => s === "denpex.logs.globs"),
    true,
  );
  assert.equal(
    needsRestart((s) => s === "denpex.checkpoints.watch" || s === "denpex.terminal.watch"),
    false,
  );
});
