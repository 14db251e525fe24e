import { test } from "node:test";
import assert from "node:assert/strict";
import { renderDiagnosisHtml, parseDiagnosisViewMessage } from "../../src/core/diagnosisHtml";
import { escapeHtml, contentSecurityPolicy } from "../../src/core/escape";
import { sampleDiagnosis } from "./fixtures";

const NONCE = "bm9uY2Vub25jZW5vbmNl";
const render = () =>
  renderDiagnosisHtml(
    { diagnosis: sampleDiagnosis(), origin: "job.log (selection)" },
    NONCE,
    "vscode-webview://abc",
  );

test("a log line containing <script> renders as text, never as markup", () => {
  const html = render();
  assert.ok(html.includes("&lt;script&gt;alert(1)&lt;/script&gt;"));
  // The only script element is ours, and it carries the nonce.
  const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
  assert.deepEqual(scripts, [`<script nonce="${NONCE}">`]);
});

test("the CSP forbids everything but nonce'd inline code and webview-local resources", () => {
  const html = render();
  const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/
    .exec(html)?.[1]
    ?.replace(/&#39;/g, "'");
  assert.ok(csp, "CSP meta tag present");
  assert.match(csp!, /default-src 'none'/);
  assert.match(csp!, new RegExp(`script-src 'nonce-${NONCE}'`));
  assert.doesNotMatch(csp!, /unsafe-inline|unsafe-eval|https?:/);
  assert.doesNotMatch(html, /\b(?:src|href)="https?:/, "no remote resources");
});

test("the view shows the server's initiator phrase and rank sets as sent, root cause and fix", () => {
  const html = render();
  assert.match(
    html,
    /<dd class="initiating">rank 3 on gpu-node-07\.cluster\.internal, GPU 3<\/dd>/,
  );
  assert.match(html, /<dd class="collateral">0-2,4-7<\/dd>/);
  assert.doesNotMatch(html, /Suspect ranks/);
  assert.match(html, /Reduce the micro-batch size/);
  assert.match(html, /CUDA out of memory/);
});

test("evidence lines and verification commands carry escaped data attributes for the click handlers", () => {
  const html = render();
  assert.match(
    html,
    /data-action="openEvidence" data-source="\/home\/alice\/runs\/job\.log" data-line="120"/,
  );
  const cmd = "echo \"$HF_TOKEN\" && grep -n 'OutOfMemory' job.log";
  assert.ok(html.includes(`data-action="runInTerminal" data-command="${escapeHtml(cmd)}"`));
  assert.ok(html.includes(`data-action="copy" data-command="${escapeHtml(cmd)}"`));
  assert.ok(!html.includes(cmd), "raw command with quotes never appears unescaped");
});

test("a command not flagged runnable can be copied but is never offered to the terminal", () => {
  const diagnosis = sampleDiagnosis();
  const finding = diagnosis.findings[0];
  if (finding === undefined) throw new Error("fixture has a finding");
  const cmd = "ssh 'x;touch${IFS}PWNED;#' dmesg -T";
  finding.verification = [cmd];
  finding.verification_runnable = [false];
  const html = renderDiagnosisHtml({ diagnosis, origin: "job.log" }, NONCE, "vscode-webview://abc");
  assert.ok(html.includes(`data-action="copy" data-command="${escapeHtml(cmd)}"`));
  assert.ok(!html.includes('data-action="runInTerminal"'), "no terminal button");
  assert.match(html, /fill in or check before running/);
});

test("no findings renders a plain message", () => {
  const html = renderDiagnosisHtml(
    { diagnosis: { schema_version: 2, findings: [] }, origin: "x" },
    NONCE,
    "src",
  );
  assert.match(html, /No known failure found/);
});

test("prevention steps from the catalog entry are listed when known", () => {
  const prevention = new Map([["cuda-oom", ["Profile peak memory <before> scaling"]]]);
  const html = renderDiagnosisHtml(
    { diagnosis: sampleDiagnosis(), origin: "x", prevention },
    NONCE,
    "src",
  );
  assert.ok(html.includes("<li>Profile peak memory &lt;before&gt; scaling</li>"));
});

test("messages posted by the page are validated", () => {
  assert.deepEqual(parseDiagnosisViewMessage({ type: "openEvidence", source: "/a.log", line: 3 }), {
    type: "openEvidence",
    source: "/a.log",
    line: 3,
  });
  assert.equal(
    parseDiagnosisViewMessage({ type: "openEvidence", source: "/a.log", line: 0 }),
    undefined,
  );
  assert.equal(
    parseDiagnosisViewMessage({ type: "openEvidence", source: "/a.log", line: "3" }),
    undefined,
  );
  assert.deepEqual(parseDiagnosisViewMessage({ type: "runInTerminal", command: "ls" }), {
    type: "runInTerminal",
    command: "ls",
  });
  assert.equal(parseDiagnosisViewMessage({ type: "runInTerminal", command: "" }), undefined);
  assert.equal(parseDiagnosisViewMessage({ type: "eval", code: "x" }), undefined);
  assert.equal(parseDiagnosisViewMessage(null), undefined);
});

test("escapeHtml covers quotes and backticks; the CSP lists the webview source", () => {
  assert.equal(
    escapeHtml(`<a href='x' title="y">\`</a>&`),
    "&lt;a href=&#39;x&#39; title=&quot;y&quot;&gt;&#96;&lt;/a&gt;&amp;",
  );
  assert.match(
    contentSecurityPolicy("n", "vscode-resource:"),
    /style-src vscode-resource: 'nonce-n'/,
  );
});

test("suspect ranks and a collateral-free finding read as the server phrased them", () => {
  const diagnosis = sampleDiagnosis();
  Object.assign(diagnosis.findings[0]!, {
    initiator: "not identified",
    collateral_ranks_text: "",
    suspect_ranks_text: "2-3,9",
  });
  const html = renderDiagnosisHtml({ diagnosis, origin: "x" }, NONCE, "src");
  assert.match(html, /<dd class="initiating">not identified<\/dd>/);
  assert.match(html, /<dd class="collateral">none<\/dd>/);
  assert.match(html, /<dt>Suspect ranks<\/dt><dd>2-3,9<\/dd>/);
});

test("the evidence list opens with the initiating line and keeps the engine's order after it", () => {
  // The engine's evidence for a torchelastic log whose SIGTERMs to the other children are
  // stamped before the line naming the rank that failed (tests/corpus/logs/a023.log).
  const diagnosis = sampleDiagnosis();
  const line = (n: number, role: "initiating" | "collateral", text: string) => ({
    source: "a023.log",
    line: n,
    text,
    rank: null,
    role,
  });
  diagnosis.findings[0]!.evidence = [
    line(
      4,
      "initiating",
      "torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -11) local_rank: 1 (pid: 750662)",
    ),
    line(
      1,
      "collateral",
      "torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 750661 closing signal SIGTERM",
    ),
    line(
      2,
      "collateral",
      "torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process 750664 closing signal SIGTERM",
    ),
  ];
  const html = renderDiagnosisHtml(
    { diagnosis, origin: "a023.log" },
    NONCE,
    "vscode-webview://abc",
  );
  const rows = [...html.matchAll(/<li class="ev ev-(\w+)">\s*<button[^>]*data-line="(\d+)"/g)].map(
    (m) => `${m[1]}:${m[2]}`,
  );
  assert.deepEqual(rows, ["initiating:4", "collateral:1", "collateral:2"]);
});
