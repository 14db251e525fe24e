// Every Denpex command, registered at activation whether or not the server runs: a command
// that needs the server says so (with "Show Logs" / "Restart") instead of failing silently.
import * as vscode from "vscode";
import * as path from "node:path";
import type { DiagnosisPanel } from "./diagnosisPanel";
import type { DriftPanel } from "./driftPanel";
import { readConfig, updateConfig } from "./config";
import {
  CATALOG_ENTRY,
  CATALOG_LIST,
  COMPARE_CHECKPOINTS,
  DIAGNOSE_TERMINAL,
  COPY_TO_CLIPBOARD,
  DIAGNOSIS_MARKDOWN,
  RUN_IN_TERMINAL,
  SHOW_CATALOG_ENTRY,
  type CatalogListResult,
  type DiagnoseTerminalParams,
  type CopyToClipboardArgs,
  type DiagnosisMarkdownParams,
  type DriftReport,
  type RunInTerminalArgs,
  type ShowCatalogEntryArgs,
} from "./protocol/methods";
import { ServerNotRunningError, type ServerManager } from "./server";
import type { TerminalWatcher } from "./terminalWatch";
import { terminalScreenText } from "./terminalWatch";
import { runInVerifyTerminal } from "./verifyTerminal";

export interface CommandDeps {
  readonly server: ServerManager;
  readonly log: vscode.LogOutputChannel;
  readonly diagnosisPanel: DiagnosisPanel;
  readonly driftPanel: DriftPanel;
  readonly terminals: TerminalWatcher;
}

async function reportFailure(deps: CommandDeps, what: string, err: unknown): Promise<void> {
  const message = err instanceof Error ? err.message : String(err);
  deps.log.error(`${what}: ${message}`);
  const actions =
    err instanceof ServerNotRunningError ? ["Restart Server", "Show Logs"] : ["Show Logs"];
  const choice = await vscode.window.showErrorMessage(
    `Denpex: ${what} failed. ${message}`,
    ...actions,
  );
  if (choice === "Restart Server") await deps.server.restart(true);
  else if (choice === "Show Logs") deps.log.show();
}

async function diagnoseEditor(deps: CommandDeps): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage(
      "Denpex: open a log and select the failure (or nothing, for the whole file) to diagnose.",
    );
    return;
  }
  const doc = editor.document;
  const selection = editor.selection;
  const range = selection.isEmpty
    ? new vscode.Range(0, 0, doc.lineCount, 0)
    : new vscode.Range(
        selection.start.line,
        0,
        selection.end.line + (selection.end.character > 0 ? 1 : 0),
        0,
      );
  const text = doc.getText(range);
  // The server's own cap on log documents (denpex.logs.maxSizeMB) bounds what is sent.
  if (text.length > readConfig().logs.maxSizeMB * 1024 * 1024) {
    void vscode.window.showWarningMessage(
      `Denpex: this text is too large to diagnose in the editor; run \`denpex diagnose ${doc.uri.fsPath}\` in a terminal.`,
    );
    return;
  }
  const origin = `${vscode.workspace.asRelativePath(doc.uri)}${selection.isEmpty ? "" : `, lines ${range.start.line + 1}-${range.end.line}`}`;
  try {
    const diagnosis = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: "Denpex: diagnosing…" },
      (_p, token) =>
        deps.server.diagnose(
          {
            text,
            uri: doc.uri.toString(),
            range: {
              start: { line: range.start.line, character: 0 },
              end: { line: range.end.line, character: 0 },
            },
          },
          token,
        ),
    );
    deps.diagnosisPanel.show(diagnosis, origin, doc.uri);
  } catch (err) {
    await reportFailure(deps, "Diagnose", err);
  }
}

/** The Explorer's context menu passes the folder's Uri; the editor's passes its document's. */
async function isFolder(arg: unknown): Promise<boolean> {
  if (!(arg instanceof vscode.Uri)) return false;
  try {
    return ((await vscode.workspace.fs.stat(arg)).type & vscode.FileType.Directory) !== 0;
  } catch {
    return false;
  }
}

/** A job folder (logs and Flight Recorder dumps): the server reads it as `denpex diagnose DIR`
 * does, dumps in its worker process, and publishes the findings on the logs' lines. */
async function diagnoseFolder(deps: CommandDeps, folder?: vscode.Uri): Promise<void> {
  const dir =
    folder ?? (await pickFolder("Job folder to diagnose (logs and Flight Recorder dumps)"));
  if (!dir) return;
  if (dir.scheme !== "file") {
    void vscode.window.showInformationMessage(
      "Denpex: only folders on this machine can be diagnosed.",
    );
    return;
  }
  try {
    const diagnosis = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Denpex: diagnosing ${vscode.workspace.asRelativePath(dir)}…`,
        cancellable: true,
      },
      (_p, token) => deps.server.diagnose({ folder: dir.toString() }, token),
    );
    deps.diagnosisPanel.show(diagnosis, `folder ${vscode.workspace.asRelativePath(dir)}`);
  } catch (err) {
    await reportFailure(deps, "Diagnose Folder", err);
  }
}

async function diagnoseTerminal(deps: CommandDeps): Promise<void> {
  const terminal = vscode.window.activeTerminal;
  if (!terminal) {
    void vscode.window.showInformationMessage("Denpex: no active terminal to diagnose.");
    return;
  }
  try {
    // The server holds the last command's output of every shell-integrated terminal, cleaned
    // of escapes and bounded; it is asked by id, and says what it diagnosed.
    const params: DiagnoseTerminalParams = { terminalId: deps.terminals.idOf(terminal) };
    const held = deps.terminals.isIntegrated(terminal)
      ? await deps.server.sendRequest(DIAGNOSE_TERMINAL, params)
      : undefined;
    if (held && held.lines > 0) {
      const what = held.commandLine || "last command";
      deps.diagnosisPanel.show(
        held.diagnosis,
        `terminal "${held.name ?? terminal.name}": ${what}${held.truncated ? ` (last ${held.lines} lines)` : ""}`,
      );
      return;
    }
    // No shell integration in this terminal: take what it shows on screen (plain text).
    deps.log.info(`terminal "${terminal.name}" has no shell integration; reading its buffer`);
    const text = await terminalScreenText(terminal);
    if (text.trim() === "") {
      void vscode.window.showInformationMessage(
        `Denpex: terminal "${terminal.name}" has no output to diagnose.`,
      );
      return;
    }
    deps.diagnosisPanel.show(
      await deps.server.diagnose({ text }),
      `terminal "${terminal.name}" (visible buffer)`,
    );
  } catch (err) {
    await reportFailure(deps, "Diagnose Terminal Output", err);
  }
}

async function pickFolder(title: string, files = false): Promise<vscode.Uri | undefined> {
  const picked = await vscode.window.showOpenDialog({
    canSelectFiles: files,
    canSelectFolders: true,
    canSelectMany: false,
    title,
    openLabel: "Select",
    defaultUri: vscode.workspace.workspaceFolders?.[0]?.uri,
  });
  return picked?.[0];
}

/** A run's folder, or one checkpoint (a weight file or a model folder). */
function pickCheckpoints(title: string): Promise<vscode.Uri | undefined> {
  return pickFolder(title, true);
}

async function watchCheckpoints(deps: CommandDeps): Promise<void> {
  const dir = await pickFolder("Checkpoint directory to watch for drift");
  if (!dir) return;
  const config = readConfig();
  const current = config.checkpoints.watch;
  if (!current.includes(dir.fsPath))
    await updateConfig("checkpoints.watch", [...current, dir.fsPath]);
  if (!config.checkpoints.reference) {
    const ref = await vscode.window.showInformationMessage(
      "Denpex: compare against a reference run? Without one, the directory is checked in replica mode.",
      "Choose Reference…",
    );
    if (ref) {
      const refDir = await pickFolder("Reference run (healthy checkpoints)");
      if (refDir) await updateConfig("checkpoints.reference", refDir.fsPath);
    }
  }
  deps.log.info(`watching ${dir.fsPath}`);
  deps.driftPanel.show();
}

/** A one-off comparison by the server (`denpex/compareCheckpoints`): one request, the noise
 * run's points (the band) in the same report. Runs and references may be single checkpoints. */
async function compareCheckpoints(deps: CommandDeps): Promise<void> {
  const run = await pickCheckpoints("Run to check (checkpoint folder or file)");
  if (!run) return;
  const ref = await pickCheckpoints("Reference run (checkpoint folder or file)");
  if (!ref) return;
  const noise = readConfig().checkpoints.noiseReference;
  let report: DriftReport;
  try {
    report = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Denpex: comparing ${path.basename(run.fsPath)} with ${path.basename(ref.fsPath)}…`,
        cancellable: true,
      },
      async (_p, token) =>
        (
          await deps.server.sendRequest(
            COMPARE_CHECKPOINTS,
            { run: run.fsPath, ref: ref.fsPath, ...(noise ? { noiseRef: noise } : {}) },
            token,
          )
        ).report,
    );
  } catch (err) {
    if (err instanceof vscode.CancellationError) return; // the server killed its worker
    return reportFailure(deps, "Compare Checkpoints", err);
  }
  deps.driftPanel.update(report);
  deps.driftPanel.show();
}

async function showCatalogEntry(deps: CommandDeps, id: string): Promise<void> {
  try {
    const entry = await deps.server.sendRequest(CATALOG_ENTRY, { id });
    const doc = await vscode.workspace.openTextDocument({
      content: entry.markdown,
      language: "markdown",
    });
    await vscode.commands.executeCommand("markdown.showPreview", doc.uri);
  } catch (err) {
    await reportFailure(deps, `Show Failure Entry ${id}`, err);
  }
}

async function showFailureEntry(deps: CommandDeps): Promise<void> {
  let entries: CatalogListResult["entries"];
  try {
    entries = (await deps.server.sendRequest(CATALOG_LIST, {})).entries;
  } catch (err) {
    return reportFailure(deps, "Show Failure Entry", err);
  }
  // Listed in the server's order: by category, ids sorted within (as `denpex catalog`).
  const pick = await vscode.window.showQuickPick(
    entries.map((e) => ({ label: e.title, description: e.id, detail: e.category, id: e.id })),
    {
      title: "Denpex failure catalog",
      matchOnDescription: true,
      matchOnDetail: true,
      placeHolder: "Type to filter failures",
    },
  );
  if (pick) await showCatalogEntry(deps, pick.id);
}

export async function copyDiagnosisMarkdown(deps: CommandDeps): Promise<void> {
  const shown = deps.diagnosisPanel.latest;
  if (!shown) {
    void vscode.window.showInformationMessage(
      'Denpex: no diagnosis to copy yet. Run "Denpex: Diagnose" first.',
    );
    return;
  }
  const redactExports = readConfig().privacy.redactExports;
  // The server renders and redacts (the same text as `denpex diagnose --markdown --redact`).
  const params: DiagnosisMarkdownParams = { diagnosis: shown.diagnosis, redact: redactExports };
  let markdown: string;
  try {
    markdown = (await deps.server.sendRequest(DIAGNOSIS_MARKDOWN, params)).markdown;
  } catch (err) {
    return reportFailure(deps, "Copy Diagnosis as Markdown", err);
  }
  await vscode.env.clipboard.writeText(markdown);
  void vscode.window.showInformationMessage(
    `Denpex: diagnosis copied as Markdown${redactExports ? " (redacted)" : ""}.`,
  );
}

function argObject<T>(arg: unknown, key: keyof T & string): T | undefined {
  return typeof arg === "object" &&
    arg !== null &&
    typeof (arg as Record<string, unknown>)[key] === "string"
    ? (arg as T)
    : undefined;
}

export function registerCommands(deps: CommandDeps): vscode.Disposable[] {
  const reg = (id: string, fn: (...args: unknown[]) => unknown) =>
    vscode.commands.registerCommand(id, fn);
  return [
    reg("denpex.diagnoseSelection", async (arg) =>
      (await isFolder(arg)) ? diagnoseFolder(deps, arg as vscode.Uri) : diagnoseEditor(deps),
    ),
    reg("denpex.diagnoseFolder", (arg) =>
      diagnoseFolder(deps, arg instanceof vscode.Uri ? arg : undefined),
    ),
    reg("denpex.diagnoseTerminal", () => diagnoseTerminal(deps)),
    reg("denpex.watchCheckpoints", () => watchCheckpoints(deps)),
    reg("denpex.compareCheckpoints", () => compareCheckpoints(deps)),
    reg("denpex.showFailureEntry", () => showFailureEntry(deps)),
    reg("denpex.restartServer", () => deps.server.restart(true)),
    reg("denpex.showLogs", () => deps.log.show()),
    reg("denpex.copyDiagnosisMarkdown", () => copyDiagnosisMarkdown(deps)),
    reg("denpex.showDriftView", () => deps.driftPanel.show()),
    // Client-side commands carried by the server's code actions (lsp-client-commands.schema.json).
    reg(RUN_IN_TERMINAL, (arg) => {
      const a = argObject<RunInTerminalArgs>(arg, "command");
      if (a) runInVerifyTerminal(a.command, a.name);
    }),
    reg(COPY_TO_CLIPBOARD, async (arg) => {
      const a = argObject<CopyToClipboardArgs>(arg, "text");
      if (a) {
        await vscode.env.clipboard.writeText(a.text);
        void vscode.window.setStatusBarMessage("Denpex: copied", 2000);
      }
    }),
    reg(SHOW_CATALOG_ENTRY, async (arg) => {
      const a = argObject<ShowCatalogEntryArgs>(arg, "id");
      if (a) await showCatalogEntry(deps, a.id);
    }),
  ];
}
