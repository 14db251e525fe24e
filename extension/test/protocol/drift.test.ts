// Checkpoint watching end to end: real safetensors checkpoints written by the test into a
// watched directory, the real server's drift worker, denpex/driftUpdate reports validated
// against drift-report.schema.json, and the flagged diagnostic on the onset checkpoint.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { PublishDiagnosticsParams } from "vscode-languageserver-protocol/node";
import { DRIFT_UPDATE, type DriftUpdateParams } from "../../src/protocol/methods";
import { ServerSession, assertSchema } from "./harness";
import { rng, writeSafetensors, type Tensor } from "./safetensors";

const ROWS = 64;
const COLS = 64;
const FAULT_FROM = 500;
const STEPS = [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000];

/**
 * Weights of a tiny model at `step`. Both runs follow the same trajectory plus their own
 * round-off noise in every element (growing like a random walk, as healthy reruns do); the
 * faulty run also has one output row of one matmul drifting away from FAULT_FROM on, a
 * permanent fault that compounds.
 */
function weights(step: number, faulty: boolean, seed: number): Record<string, Tensor> {
  const base = rng(1234);
  const noise = rng(seed * 100_000 + step);
  const roundoff = () => (noise() - 0.5) * 2e-6 * Math.sqrt(step / 100);
  const tensor = (rows: number, scale: number): Float32Array => {
    const t = new Float32Array(rows * COLS);
    for (let i = 0; i < t.length; i++) t[i] = (base() - 0.5) * scale + step * 1e-5 + roundoff();
    return t;
  };
  const w = tensor(ROWS, 0.2);
  if (faulty && step >= FAULT_FROM) {
    const k = (step - FAULT_FROM) / 100 + 1;
    for (let c = 0; c < COLS; c++) w[7 * COLS + c] += 1e-3 * k * k;
  }
  return {
    "layers.0.mlp.weight": { shape: [ROWS, COLS], data: w },
    "layers.0.attn.weight": { shape: [ROWS, COLS], data: tensor(ROWS, 0.2) },
    "embed.weight": { shape: [32, COLS], data: tensor(32, 0.1) },
  };
}

const dir = mkdtempSync(path.join(os.tmpdir(), "denpex-drift-"));
const ref = path.join(dir, "ref");
const run = path.join(dir, "faulty");
const healthy = path.join(dir, "healthy");
const checkpoint = (root: string, step: number) => path.join(root, `step_${step}`, "model.safetensors");
for (const step of STEPS) writeSafetensors(checkpoint(ref, step), weights(step, false, 1));
for (const step of STEPS.slice(0, -1)) writeSafetensors(checkpoint(run, step), weights(step, true, 2));
for (const step of STEPS) writeSafetensors(checkpoint(healthy, step), weights(step, false, 3));

const session = new ServerSession({ checkpoints: { watch: [run, healthy], reference: ref }, drift: { device: "cpu" } }, dir);
after(async () => {
  await session.close();
  rmSync(dir, { recursive: true, force: true });
});

test("a checkpoint landing in a watched directory produces a schema-valid, flagged drift report and a diagnostic on the onset checkpoint", { timeout: 240_000 }, async () => {
  await session.initialize(dir);
  const last = STEPS[STEPS.length - 1];
  // Give the watcher a moment to start, then land the newest checkpoint as a trainer would.
  await new Promise((r) => setTimeout(r, 1500));
  writeSafetensors(checkpoint(run, last), weights(last, true, 2));
  const update = await session.waitFor<DriftUpdateParams>(DRIFT_UPDATE, (p) => path.resolve(p.report.run) === path.resolve(run) && p.report.points.some((pt) => pt.step === last), 180_000);
  assertSchema("lsp-drift-update.schema.json", update);
  const { report } = update;
  assert.equal(path.resolve(report.run), path.resolve(run));
  assert.deepEqual(report.points.map((p) => p.step), STEPS);
  assert.equal(report.flagged, true, `verdict ${report.verdict}: ${report.notes.join("; ")}`);
  assert.equal(report.verdict, "gradual_drift");
  assert.ok(report.onset_step !== null && Math.abs(report.onset_step - FAULT_FROM) <= 100, `onset ${report.onset_step}`);
  const before = report.points.filter((p) => p.step < FAULT_FROM).map((p) => p.l2 ?? Infinity);
  const afterOnset = report.points.filter((p) => p.step >= FAULT_FROM + 200).map((p) => p.l2 ?? 0);
  assert.ok(Math.min(...afterOnset) > 10 * Math.max(...before), "the faulty steps are far above the benign ones");
  const flagged = await session.waitFor<PublishDiagnosticsParams>("textDocument/publishDiagnostics", (p) => p.uri.includes(`/faulty/step_`) && p.diagnostics.length > 0, 30_000);
  assert.ok(flagged.diagnostics.every((d) => d.source === "denpex"));
  assert.ok(flagged.uri.includes(`step_${report.onset_step}`), `diagnostic on the onset checkpoint: ${flagged.uri}`);
});

test("a healthy rerun that differs only by round-off is reported but not flagged", { timeout: 240_000 }, async () => {
  const update = await session.waitFor<DriftUpdateParams>(DRIFT_UPDATE, (p) => path.resolve(p.report.run) === path.resolve(healthy) && p.report.points.length === STEPS.length, 180_000);
  assertSchema("lsp-drift-update.schema.json", update);
  assert.ok(update.report.points.every((p) => (p.l2 ?? 0) > 0), "the runs do differ");
  assert.equal(update.report.flagged, false, `verdict ${update.report.verdict}: ${update.report.notes.join("; ")}`);
  assert.equal(update.report.onset_step, null);
});
