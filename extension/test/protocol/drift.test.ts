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
import { FAULT_FROM, STEPS, writeCheckpoint, writeRun } from "../support/driftRuns";

const dir = mkdtempSync(path.join(os.tmpdir(), "denpex-drift-"));
const ref = path.join(dir, "ref");
const run = path.join(dir, "faulty");
const healthy = path.join(dir, "healthy");
writeRun(ref, "reference");
writeRun(run, "faulty", STEPS.slice(0, -1));
writeRun(healthy, "healthy");

const session = new ServerSession(
  { checkpoints: { watch: [run, healthy], reference: ref }, drift: { device: "cpu" } },
  dir,
);
after(async () => {
  await session.close();
  rmSync(dir, { recursive: true, force: true });
});

test(
  "a checkpoint landing in a watched directory produces a schema-valid, flagged drift report and a diagnostic on the onset checkpoint",
  { timeout: 240_000 },
  async () => {
    await session.initialize(dir);
    const last = STEPS[STEPS.length - 1];
    // Give the watcher a moment to start, then land the newest checkpoint as a trainer would.
    await new Promise((r) => setTimeout(r, 1500));
    writeCheckpoint(run, "faulty", last);
    const update = await session.waitFor<DriftUpdateParams>(
      DRIFT_UPDATE,
      (p) =>
        path.resolve(p.report.run) === path.resolve(run) &&
        p.report.points.some((pt) => pt.step === last),
      180_000,
    );
    assertSchema("lsp-drift-update.schema.json", update);
    const { report } = update;
    assert.equal(path.resolve(report.run), path.resolve(run));
    assert.deepEqual(
      report.points.map((p) => p.step),
      STEPS,
    );
    assert.equal(report.flagged, true, `verdict ${report.verdict}: ${report.notes.join("; ")}`);
    assert.equal(report.verdict, "gradual_drift");
    assert.ok(
      report.onset_step !== null && Math.abs(report.onset_step - FAULT_FROM) <= 100,
      `onset ${report.onset_step}`,
    );
    const before = report.points.filter((p) => p.step < FAULT_FROM).map((p) => p.l2 ?? Infinity);
    const afterOnset = report.points
      .filter((p) => p.step >= FAULT_FROM + 200)
      .map((p) => p.l2 ?? 0);
    assert.ok(
      Math.min(...afterOnset) > 10 * Math.max(...before),
      "the faulty steps are far above the benign ones",
    );
    const flagged = await session.waitFor<PublishDiagnosticsParams>(
      "textDocument/publishDiagnostics",
      (p) => p.uri.includes(`/faulty/step_`) && p.diagnostics.length > 0,
      30_000,
    );
    assert.ok(flagged.diagnostics.every((d) => d.source === "denpex"));
    assert.ok(
      flagged.uri.includes(`step_${report.onset_step}`),
      `diagnostic on the onset checkpoint: ${flagged.uri}`,
    );
  },
);

test(
  "a healthy rerun that differs only by round-off is reported but not flagged",
  { timeout: 240_000 },
  async () => {
    const update = await session.waitFor<DriftUpdateParams>(
      DRIFT_UPDATE,
      (p) =>
        path.resolve(p.report.run) === path.resolve(healthy) &&
        p.report.points.length === STEPS.length,
      180_000,
    );
    assertSchema("lsp-drift-update.schema.json", update);
    assert.ok(
      update.report.points.every((p) => (p.l2 ?? 0) > 0),
      "the runs do differ",
    );
    assert.equal(
      update.report.flagged,
      false,
      `verdict ${update.report.verdict}: ${update.report.notes.join("; ")}`,
    );
    assert.equal(update.report.onset_step, null);
  },
);
