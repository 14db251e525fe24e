// Protocol tests against the real `denpex serve`: the same method names and payload types
// the extension uses (src/protocol/methods.ts), real stdio, real diagnosis engine.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import {
  DiagnosticSeverity,
  DidOpenTextDocumentNotification,
  ExecuteCommandRequest,
  CodeActionRequest,
  HoverRequest,
  type PublishDiagnosticsParams,
  type CodeAction,
  type Hover,
} from "vscode-languageserver-protocol/node";
import {
  CATALOG_ENTRY,
  CATALOG_LIST,
  DIAGNOSE_COMMAND,
  DIAGNOSE_TERMINAL,
  DIAGNOSIS_MARKDOWN,
  FINDING,
  GET_STATUS,
  RUN_IN_TERMINAL,
  COPY_TO_CLIPBOARD,
  SHOW_CATALOG_ENTRY,
  STATUS,
  TERMINAL_COMMAND_END,
  TERMINAL_DATA,
  VERIFY_TERMINAL,
  type CatalogEntryResult,
  type CatalogListResult,
  type DiagnoseTerminalParams,
  type DiagnoseTerminalResult,
  type DenpexDiagnosis,
  type DiagnoseArgs,
  type DiagnosisMarkdownParams,
  type DiagnosisMarkdownResult,
  type FindingParams,
  type StatusParams,
  type TerminalCommandEndParams,
  type TerminalDataParams,
} from "../../src/protocol/methods";
import { ROOT, ServerSession, assertSchema, fixture } from "./harness";

const LOG = fixture("multirank-oom.log");
const LOG_URI = pathToFileURL(LOG).toString();
const LOG_TEXT = readFileSync(LOG, "utf8");
const LOG_LINES = LOG_TEXT.split("\n");
const OOM_LINE = LOG_LINES.findIndex((l) => l.includes("torch.OutOfMemoryError")); // 0-based

const session = new ServerSession();
const ready = session.initialize();
after(async () => {
  const code = await session.close();
  assert.equal(code, 0, `server exit code; stderr:\n${session.stderr.join("").slice(-2000)}`);
});

async function openLog(): Promise<PublishDiagnosticsParams> {
  await ready;
  await session.connection.sendNotification(DidOpenTextDocumentNotification.type, {
    textDocument: { uri: LOG_URI, languageId: "log", version: 1, text: LOG_TEXT },
  });
  return session.waitFor<PublishDiagnosticsParams>(
    "textDocument/publishDiagnostics",
    (p) => p.uri === LOG_URI && p.diagnostics.length > 0,
  );
}

test("a multi-rank log gets an Error on the initiating line and grouped Warnings for collateral ranks", async () => {
  const published = await openLog();
  const errors = published.diagnostics.filter((d) => d.severity === DiagnosticSeverity.Error);
  assert.equal(errors.length, 1, JSON.stringify(published.diagnostics, null, 1));
  const [err] = errors;
  assert.equal(err.range.start.line, OOM_LINE, "the OOM line is the initiating evidence");
  assert.equal(err.source, "denpex");
  assert.equal(err.code, "cuda-oom");
  assert.match(err.message, /rank 3/i);
  const warnings = published.diagnostics.filter((d) => d.severity === DiagnosticSeverity.Warning);
  const watchdog = warnings.filter((d) => /Watchdog|timeout/i.test(LOG_LINES[d.range.start.line]));
  // Seven ranks time out with one message: grouped into one diagnostic listing the ranks.
  assert.equal(watchdog.length, 1, JSON.stringify(warnings, null, 1));
  assert.match(watchdog[0].message, /0-2, ?4-7/);
  assert.ok(
    watchdog[0].relatedInformation?.some(
      (r) => r.location.uri === LOG_URI && r.location.range.start.line === OOM_LINE,
    ),
    "collateral diagnostic links to the initiating line",
  );
});

test("hover on the initiating line explains the failure; code actions carry the client-side commands", async () => {
  const published = await openLog();
  const err = published.diagnostics.find((d) => d.severity === DiagnosticSeverity.Error)!;
  const hover = (await session.connection.sendRequest(HoverRequest.type, {
    textDocument: { uri: LOG_URI },
    position: { line: OOM_LINE, character: 10 },
  })) as Hover | null;
  assert.ok(hover, "hover on an evidence line");
  const text =
    typeof hover.contents === "object" && "value" in hover.contents
      ? hover.contents.value
      : JSON.stringify(hover.contents);
  assert.match(text, /out of memory/i);
  const actions = (await session.connection.sendRequest(CodeActionRequest.type, {
    textDocument: { uri: LOG_URI },
    range: err.range,
    context: { diagnostics: [err] },
  })) as CodeAction[];
  const commands = actions.map((a) => a.command?.command);
  assert.ok(commands.includes(RUN_IN_TERMINAL), JSON.stringify(commands));
  assert.ok(commands.includes(COPY_TO_CLIPBOARD));
  assert.ok(commands.includes(SHOW_CATALOG_ENTRY));
  const run = actions.find((a) => a.command?.command === RUN_IN_TERMINAL)!;
  const arg = run.command!.arguments![0] as { command: string; name: string };
  assertSchema("lsp-client-commands.schema.json#/$defs/denpex.runInTerminal", arg);
  assert.equal(arg.name, VERIFY_TERMINAL);
  assert.ok(arg.command.length > 0);
});

test("code actions for a selection spanning the traceback and the collateral lines answer promptly", async () => {
  await openLog();
  // VS Code asks for code actions on every selection change; a slow answer stalls the editor.
  const started = Date.now();
  const actions = (await session.connection.sendRequest(CodeActionRequest.type, {
    textDocument: { uri: LOG_URI },
    range: {
      start: { line: OOM_LINE - 6, character: 0 },
      end: { line: OOM_LINE + 4, character: 0 },
    },
    context: { diagnostics: [] },
  })) as CodeAction[];
  assert.ok(Date.now() - started < 5000, `answered in ${Date.now() - started} ms`);
  assert.ok(actions.some((a) => a.command?.command === RUN_IN_TERMINAL));
});

test("denpex.diagnose on a selection returns a schema-valid diagnosis with the initiating rank, numbered from the selection", async () => {
  await ready;
  const start = OOM_LINE - 6;
  const selection = LOG_LINES.slice(start, OOM_LINE + 9).join("\n");
  const args: DiagnoseArgs = {
    text: selection,
    uri: LOG_URI,
    range: { start: { line: start, character: 0 }, end: { line: OOM_LINE + 9, character: 0 } },
  };
  const result = (await session.connection.sendRequest(ExecuteCommandRequest.type, {
    command: DIAGNOSE_COMMAND,
    arguments: [args],
  })) as DenpexDiagnosis;
  assertSchema("diagnosis.schema.json", result);
  const [first] = result.findings;
  assert.equal(first.id, "cuda-oom");
  assert.equal(first.initiating_rank, 3);
  assert.equal(first.gpu, 3);
  assert.deepEqual(first.collateral_ranks, [0, 1, 2, 4, 5, 6, 7]);
  // Ready to show: the panel renders these as sent.
  assert.equal(first.collateral_ranks_text, "0-2,4-7");
  assert.match(first.initiator ?? "", /^rank 3\b.*GPU 3$/);
  const initiating = first.evidence.find((e) => e.role === "initiating")!;
  assert.equal(
    initiating.line,
    OOM_LINE + 1,
    "evidence lines are 1-based lines of the document, not of the selection",
  );
});

test("denpex.diagnose with bad arguments is an InvalidParams error, and the server keeps serving", async () => {
  await ready;
  await assert.rejects(
    session.connection.sendRequest(ExecuteCommandRequest.type, {
      command: DIAGNOSE_COMMAND,
      arguments: [{ nothing: true }],
    }),
    (e: { code?: number }) => e.code === -32602,
  );
  const status = await session.connection.sendRequest<StatusParams>(GET_STATUS, null);
  assertSchema("lsp-status.schema.json", status);
  assert.equal(status.privacy, "local-only");
});

test("terminal chunks split mid-line and mid-escape produce exactly one denpex/finding", async () => {
  await ready;
  const terminalId = "t-proto-1";
  const failure =
    LOG_LINES.slice(OOM_LINE - 5, OOM_LINE + 9)
      .map((l) => `\u001b[31m${l}\u001b[0m`)
      .join("\r\n") + "\r\n";
  const chunks: string[] = [];
  for (let i = 0; i < failure.length; i += 37) chunks.push(failure.slice(i, i + 37));
  for (const data of chunks) {
    const params: TerminalDataParams = { terminalId, name: "bash", data };
    await session.connection.sendNotification(TERMINAL_DATA, params);
  }
  const end: TerminalCommandEndParams = {
    terminalId,
    name: "bash",
    commandLine: "torchrun --nproc-per-node 8 train.py",
    exitCode: 1,
  };
  await session.connection.sendNotification(TERMINAL_COMMAND_END, end);
  const finding = await session.waitFor<FindingParams>(
    FINDING,
    (p) => String(p.terminalId) === terminalId,
  );
  assertSchema("lsp-finding.schema.json", finding);
  assert.equal(finding.source, "bash");
  assert.equal(finding.diagnosis.findings[0].id, "cuda-oom");
  assert.equal(finding.diagnosis.findings[0].initiating_rank, 3);
  // Quiet period: no duplicate for the same failure.
  await new Promise((r) => setTimeout(r, 1500));
  const all = session.notifications.filter(
    (n) => n.method === FINDING && String((n.params as FindingParams).terminalId) === terminalId,
  );
  assert.equal(all.length, 1, "one notification per failure, not per chunk");

  // "Diagnose Terminal Output" names the terminal; the server diagnoses what it buffered.
  const params: DiagnoseTerminalParams = { terminalId };
  const held = await session.connection.sendRequest<DiagnoseTerminalResult>(
    DIAGNOSE_TERMINAL,
    params,
  );
  assertSchema("lsp-diagnose-terminal-result.schema.json", held);
  assert.equal(held.name, "bash");
  assert.equal(held.commandLine, "torchrun --nproc-per-node 8 train.py");
  assert.equal(held.lines, 14);
  assert.equal(held.diagnosis.findings[0].id, "cuda-oom");
  assert.ok(held.diagnosis.findings[0].evidence.every((e) => !e.text.includes("\u001b")));
  const unknown = await session.connection.sendRequest<DiagnoseTerminalResult>(DIAGNOSE_TERMINAL, {
    terminalId: "never-seen",
  });
  assert.equal(unknown.lines, 0);
});

test("denpex/catalogEntry returns the entry's lists and its markdown, denpex/catalogList every entry; an unknown id is InvalidParams", async () => {
  await ready;
  const entry = await session.connection.sendRequest<CatalogEntryResult>(CATALOG_ENTRY, {
    id: "cuda-oom",
  });
  assertSchema("lsp-catalog-entry-result.schema.json", entry);
  assert.equal(entry.id, "cuda-oom");
  assert.match(entry.markdown, /#/);
  assert.ok(
    entry.prevention.length > 0 && entry.prevention.every((p) => entry.markdown.includes(p)),
    "prevention steps as data",
  );
  const list = await session.connection.sendRequest<CatalogListResult>(CATALOG_LIST, {});
  assertSchema("lsp-catalog-list-result.schema.json", list);
  assert.ok(list.entries.some((e) => e.id === "cuda-oom" && e.title === entry.title));
  await assert.rejects(
    session.connection.sendRequest(CATALOG_ENTRY, { id: "no-such-entry" }),
    (e: { code?: number }) => e.code === -32602,
  );
});

test("denpex/diagnosisMarkdown renders a diagnosis for a ticket, redacted on request", async () => {
  await ready;
  // A torchelastic failure table names the failing rank's host (dgx-14).
  const text = readFileSync(path.join(ROOT, "tests/logs/elastic_wrong_root_cause.log"), "utf8");
  const diagnosis = (await session.connection.sendRequest(ExecuteCommandRequest.type, {
    command: DIAGNOSE_COMMAND,
    arguments: [{ text } satisfies DiagnoseArgs],
  })) as DenpexDiagnosis;
  const host = "dgx-14";
  assert.equal(diagnosis.findings[0].host, host);
  for (const redact of [false, true]) {
    const params: DiagnosisMarkdownParams = { diagnosis, redact };
    assertSchema("lsp-diagnosis-markdown-params.schema.json", params);
    const result = await session.connection.sendRequest<DiagnosisMarkdownResult>(
      DIAGNOSIS_MARKDOWN,
      params,
    );
    assertSchema("lsp-diagnosis-markdown-result.schema.json", result);
    assert.match(result.markdown, /^# Denpex diagnosis\n\n## /);
    assert.equal(result.markdown.includes("redacted._"), redact);
    assert.equal(result.markdown.includes(host), !redact);
  }
  await assert.rejects(
    session.connection.sendRequest(DIAGNOSIS_MARKDOWN, {
      diagnosis: { findings: [{}] },
      redact: true,
    }),
    (e: { code?: number }) => e.code === -32602,
  );
});

test("the server announces its status as local-only", async () => {
  await ready;
  const status = await session.waitFor<StatusParams>(STATUS);
  assertSchema("lsp-status.schema.json", status);
  assert.equal(status.privacy, "local-only");
  assert.equal(status.blockedConnections, 0);
});
