// "Compare Checkpoints…" as the extension sends it: one denpex/compareCheckpoints request to
// the real server, real safetensors files, the report (noise run's points included) validated
// against the schemas.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  COMPARE_CHECKPOINTS,
  type CompareCheckpointsParams,
  type CompareCheckpointsResult,
} from "../../src/protocol/methods";
import { ServerSession, assertSchema } from "./harness";
import { STEPS, checkpointPath, writeRun } from "../support/driftRuns";

const dir = mkdtempSync(path.join(os.tmpdir(), "denpex-compare-"));
const ref = path.join(dir, "ref");
const run = path.join(dir, "faulty");
const noise = path.join(dir, "healthy");
writeRun(ref, "reference");
writeRun(run, "faulty");
writeRun(noise, "healthy");

const session = new ServerSession({ drift: { device: "cpu" } }, dir);
after(async () => {
  await session.close();
  rmSync(dir, { recursive: true, force: true });
});

async function compare(params: CompareCheckpointsParams): Promise<CompareCheckpointsResult> {
  assertSchema("lsp-compare-checkpoints-params.schema.json", params);
  const result = await session.connection.sendRequest<CompareCheckpointsResult>(
    COMPARE_CHECKPOINTS,
    params,
  );
  assertSchema("lsp-compare-checkpoints-result.schema.json", result);
  return result;
}

test(
  "one request compares the run and the noise run; the report carries both series",
  { timeout: 240_000 },
  async () => {
    await session.initialize(dir);
    const { report } = await compare({ run, ref, noiseRef: noise });
    assert.equal(report.flagged, true, `verdict ${report.verdict}: ${report.notes.join("; ")}`);
    assert.deepEqual(
      report.points.map((p) => p.step),
      STEPS,
    );
    assert.deepEqual(
      (report.noise_points ?? []).map((p) => p.step),
      STEPS,
    );
    assert.equal(report.points[0].file, path.dirname(checkpointPath(run, STEPS[0])));
  },
);

test(
  "two single checkpoint files give one point, verdict single_point",
  { timeout: 120_000 },
  async () => {
    const a = checkpointPath(run, STEPS[STEPS.length - 1]);
    const b = checkpointPath(ref, STEPS[STEPS.length - 1]);
    const { report } = await compare({ run: a, ref: b });
    assert.equal(report.verdict, "single_point");
    assert.equal(report.points.length, 1);
  },
);
