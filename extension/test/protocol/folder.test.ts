// "Denpex: Diagnose" on a job folder, as the extension sends it: a real 4-rank gloo job under
// torchrun (tests/fr_job.py) leaves its log and real Flight Recorder dumps in a folder; the
// real server reads them (the dumps in its worker process) and names the rank that never
// arrived, with the findings published on the log's lines.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import {
  ExecuteCommandRequest,
  type PublishDiagnosticsParams,
} from "vscode-languageserver-protocol/node";
import {
  DIAGNOSE_COMMAND,
  type DenpexDiagnosis,
  type DiagnoseArgs,
} from "../../src/protocol/methods";
import { ROOT, ServerSession, assertSchema, denpexPython } from "./harness";

const STALL = "rank-stall-before-collective";
const dir = mkdtempSync(path.join(os.tmpdir(), "denpex-folder-"));
const job = path.join(dir, "job");
const session = new ServerSession({}, dir);
const ready = session.initialize(dir);
after(async () => {
  await session.close();
  rmSync(dir, { recursive: true, force: true });
});

function diagnose(args: DiagnoseArgs): Promise<DenpexDiagnosis> {
  return session.connection.sendRequest(ExecuteCommandRequest.type, {
    command: DIAGNOSE_COMMAND,
    arguments: [args],
  }) as Promise<DenpexDiagnosis>;
}

test(
  "denpex.diagnose on a job folder names the rank that never arrived, from its dumps, on the log's lines",
  { timeout: 240_000 },
  async () => {
    const runJob =
      "import sys; from pathlib import Path; sys.path.insert(0, 'tests'); from fr_job import run_job; run_job(Path(sys.argv[1]), 'skip')";
    execFileSync(denpexPython(), ["-c", runJob, job], {
      cwd: ROOT,
      stdio: "pipe",
      timeout: 200_000,
    });
    await ready;
    const result = await diagnose({ folder: pathToFileURL(job).toString() });
    assertSchema("diagnosis.schema.json", result);
    const [root] = result.findings;
    assert.equal(root.id, STALL);
    assert.equal(root.initiating_rank, 3);
    assert.deepEqual(root.collateral_ranks, [0, 1, 2]);
    assert.equal(
      root.evidence.find((e) => e.role === "initiating")?.source,
      path.join(job, "fr_rank_3"),
    );

    const log = pathToFileURL(path.join(job, "train.log")).toString();
    const published = await session.waitFor<PublishDiagnosticsParams>(
      "textDocument/publishDiagnostics",
      (p) => p.uri === log && p.diagnostics.some((d) => d.code === STALL),
    );
    const onLog = root.evidence
      .filter((e) => e.source === path.join(job, "train.log"))
      .map((e) => e.line);
    // The same report from several waiting ranks is one grouped diagnostic: its data lists every line it covers.
    const covered = published.diagnostics
      .filter((d) => d.code === STALL)
      .flatMap((d) => (d.data as { lines: number[] }).lines);
    assert.deepEqual(
      [...new Set(covered)].sort((a, b) => a - b),
      [...new Set(onLog)].sort((a, b) => a - b),
    );
    assert.ok(
      !session.notifications.some(
        (n) =>
          n.method === "textDocument/publishDiagnostics" &&
          (n.params as PublishDiagnosticsParams).uri.includes("fr_rank_"),
      ),
      "no diagnostics on the binary dumps",
    );
  },
);

test("denpex.diagnose on a folder that is not one is InvalidParams; an empty one a clear error", async () => {
  await ready;
  await assert.rejects(
    diagnose({ folder: pathToFileURL(path.join(dir, "missing")).toString() }),
    (e: { code?: number }) => e.code === -32602,
  );
  const empty = path.join(dir, "empty");
  mkdirSync(empty);
  await assert.rejects(
    diagnose({ folder: pathToFileURL(empty).toString() }),
    (e: { code?: number; message?: string }) =>
      e.code === -32603 && /holds no files/.test(e.message ?? ""),
  );
});
