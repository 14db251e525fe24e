// Renders a diagnosis as the body of the diagnosis webview. Pure: the panel module passes
// the nonce and CSP source in and wires the posted messages to editor actions.
import type { DenpexDiagnosis, Finding, Evidence } from "../protocol/methods";
import { escapeHtml, webviewDocument } from "./escape";

/** Messages the page posts back to the extension. */
export type DiagnosisViewMessage =
  | { type: "openEvidence"; source: string; line: number }
  | { type: "runInTerminal"; command: string }
  | { type: "copy"; command: string }
  | { type: "copyMarkdown" };

export interface DiagnosisViewInput {
  readonly diagnosis: DenpexDiagnosis;
  /** Where the text came from, e.g. a file name or "terminal: bash". */
  readonly origin: string;
  /** Prevention steps per catalog id, when the catalog entry could be fetched. */
  readonly prevention?: ReadonlyMap<string, readonly string[]>;
}

const ROLE_LABEL: Record<Evidence["role"], string> = {
  initiating: "initiating",
  collateral: "collateral",
  context: "context",
};

function evidenceRow(ev: Evidence): string {
  const rank = ev.rank === null ? "" : `rank ${ev.rank}`;
  return `<li class="ev ev-${escapeHtml(ev.role)}">
<button class="link" data-action="openEvidence" data-source="${escapeHtml(ev.source)}" data-line="${escapeHtml(ev.line)}" title="Go to ${escapeHtml(ev.source)}:${escapeHtml(ev.line)}">${escapeHtml(ev.source)}:${escapeHtml(ev.line)}</button>
<span class="role">${escapeHtml(ROLE_LABEL[ev.role])}</span> <span class="rank">${escapeHtml(rank)}</span>
<pre>${escapeHtml(ev.text)}</pre></li>`;
}

// A command the server did not flag runnable (a blank to fill, a value from the log that
// failed its check) is shown with Copy only; a runnable one is typed into a terminal, and
// the user presses Enter (verifyTerminal.ts).
function verificationRow(command: string, runnable: boolean): string {
  const type = runnable
    ? `<button data-action="runInTerminal" data-command="${escapeHtml(command)}">Type in terminal</button>\n`
    : "";
  const note = runnable ? "" : `<span class="check">fill in or check before running</span> `;
  return `<li class="verify"><pre class="cmd">${escapeHtml(command)}</pre>
<span class="buttons">${note}${type}<button data-action="copy" data-command="${escapeHtml(command)}">Copy</button></span></li>`;
}

function list(items: readonly string[]): string {
  return `<ul>${items.map((i) => `<li>${escapeHtml(i)}</li>`).join("")}</ul>`;
}

function findingSection(
  f: Finding,
  index: number,
  prevention: readonly string[] | undefined,
): string {
  // The server sends the rank sets and the initiator phrased (finding.py), as the CLI and the
  // Markdown export print them.
  const collateral = f.collateral_ranks_text || "none";
  const suspects = f.suspect_ranks_text
    ? `<dt>Suspect ranks</dt><dd>${escapeHtml(f.suspect_ranks_text)}</dd>`
    : "";
  const attribution = f.attribution
    ? `<dt>Attribution</dt><dd class="attribution">${escapeHtml(`${f.attribution.confidence} confidence, ${f.attribution.reason}`)}</dd>`
    : "";
  const evidence =
    f.evidence.length > 0
      ? `<ol class="evidence">${f.evidence.map(evidenceRow).join("\n")}</ol>`
      : "<p>No evidence lines.</p>";
  const verification =
    f.verification.length > 0
      ? `<ul class="verification">${f.verification.map((c, i) => verificationRow(c, f.verification_runnable?.[i] === true)).join("\n")}</ul>`
      : "<p>No verification commands.</p>";
  const preventionBlock =
    prevention && prevention.length > 0
      ? list(prevention)
      : '<p class="muted">Open the catalog entry for prevention steps.</p>';
  return `<section class="finding" id="finding-${index}">
<h2>${index === 0 ? "" : "Also: "}${escapeHtml(f.title)}</h2>
<p class="meta"><span class="badge">${escapeHtml(f.category)}</span> <code>${escapeHtml(f.id)}</code> · confidence ${escapeHtml(Math.round(f.confidence * 100))}%</p>
<dl>
<dt>Initiating rank</dt><dd class="initiating">${escapeHtml(f.initiator ?? "")}</dd>
<dt>Collateral ranks</dt><dd class="collateral">${escapeHtml(collateral)}</dd>
${suspects}
${attribution}
</dl>
<h3>Evidence</h3>
${evidence}
<h3>Root cause</h3>
<p class="root-cause">${escapeHtml(f.root_cause)}</p>
<h3>Fix</h3>
<p class="fix">${escapeHtml(f.fix)}</p>
<h3>Prevention</h3>
${preventionBlock}
<h3>Verification</h3>
${verification}
</section>`;
}

const CSS = `
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1em 2em; line-height: 1.45; }
h1 { font-size: 1.3em; margin-bottom: 0.2em; }
h2 { font-size: 1.15em; margin-top: 1.2em; }
h3 { font-size: 1em; margin: 1em 0 0.3em; }
.muted, .origin { color: var(--vscode-descriptionForeground); }
.badge { background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); padding: 0 0.5em; border-radius: 3px; }
dl { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1em; }
dt { font-weight: 600; }
dd { margin: 0; }
pre { font-family: var(--vscode-editor-font-family); white-space: pre-wrap; word-break: break-all; margin: 0.2em 0; }
ol.evidence, ul.verification { padding-left: 1.2em; }
.ev-initiating pre { border-left: 3px solid var(--vscode-editorError-foreground); padding-left: 0.5em; }
.ev-collateral pre { border-left: 3px solid var(--vscode-editorWarning-foreground); padding-left: 0.5em; }
.ev-context pre { border-left: 3px solid var(--vscode-editorInfo-foreground); padding-left: 0.5em; }
.role { font-size: 0.85em; text-transform: uppercase; color: var(--vscode-descriptionForeground); }
button { background: var(--vscode-button-background); color: var(--vscode-button-foreground); border: none; padding: 2px 8px; cursor: pointer; }
button:hover { background: var(--vscode-button-hoverBackground); }
button.link { background: none; color: var(--vscode-textLink-foreground); padding: 0; text-decoration: underline; }
.cmd { background: var(--vscode-textCodeBlock-background); padding: 0.3em 0.5em; }
.privacy { margin-top: 2em; font-size: 0.85em; color: var(--vscode-descriptionForeground); }
`;

// The page script only forwards clicks; it never builds markup from data.
const SCRIPT = `
const vscode = acquireVsCodeApi();
document.addEventListener('click', (event) => {
  const el = event.target instanceof Element ? event.target.closest('[data-action]') : null;
  if (!el) return;
  const action = el.getAttribute('data-action');
  if (action === 'openEvidence') vscode.postMessage({ type: action, source: el.getAttribute('data-source'), line: Number(el.getAttribute('data-line')) });
  else if (action === 'runInTerminal' || action === 'copy') vscode.postMessage({ type: action, command: el.getAttribute('data-command') });
  else if (action === 'copyMarkdown') vscode.postMessage({ type: action });
});
`;

export function renderDiagnosisBody(input: DiagnosisViewInput): string {
  const { diagnosis, origin } = input;
  const header = `<h1>Denpex diagnosis</h1><p class="origin">${escapeHtml(origin)} <button data-action="copyMarkdown">Copy as Markdown</button></p>`;
  const body =
    diagnosis.findings.length === 0
      ? `<p class="none">No known failure found in this text.</p>`
      : diagnosis.findings
          .map((f, i) => findingSection(f, i, input.prevention?.get(f.id)))
          .join("\n");
  return `${header}\n${body}\n<p class="privacy">Diagnosed on this machine by the local Denpex server; nothing was sent anywhere.</p>`;
}

export function renderDiagnosisHtml(
  input: DiagnosisViewInput,
  nonce: string,
  cspSource: string,
): string {
  return webviewDocument({
    title: "Denpex diagnosis",
    nonce,
    cspSource,
    css: CSS,
    body: renderDiagnosisBody(input),
    script: SCRIPT,
  });
}

/** Validates a message posted by the page; the page is untrusted input too. */
export function parseDiagnosisViewMessage(raw: unknown): DiagnosisViewMessage | undefined {
  if (typeof raw !== "object" || raw === null) return undefined;
  const m = raw as Record<string, unknown>;
  switch (m.type) {
    case "openEvidence":
      return typeof m.source === "string" && Number.isInteger(m.line) && (m.line as number) >= 1
        ? { type: "openEvidence", source: m.source, line: m.line as number }
        : undefined;
    case "runInTerminal":
    case "copy":
      return typeof m.command === "string" && m.command.length > 0
        ? { type: m.type, command: m.command }
        : undefined;
    case "copyMarkdown":
      return { type: "copyMarkdown" };
    default:
      return undefined;
  }
}
