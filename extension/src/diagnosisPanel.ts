// The diagnosis webview: one panel, reused, showing the latest diagnosis. Clicks on evidence
// lines open the log at that line; verification commands run in "Denpex verify" or copy.
import * as vscode from "vscode";
import * as path from "node:path";
import { parseDiagnosisViewMessage, renderDiagnosisHtml } from "./core/diagnosisHtml";
import { CATALOG_ENTRY, type DenpexDiagnosis } from "./protocol/methods";
import type { ServerManager } from "./server";
import { runInVerifyTerminal } from "./verifyTerminal";
import { nonce } from "./webviewNonce";

export interface ShownDiagnosis {
  readonly diagnosis: DenpexDiagnosis;
  readonly origin: string;
  /** The document the evidence lines refer to, when diagnosed from an editor. */
  readonly document?: vscode.Uri;
  prevention: Map<string, readonly string[]>;
}

export class DiagnosisPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private current: ShownDiagnosis | undefined;

  constructor(
    private readonly server: ServerManager,
    private readonly log: vscode.LogOutputChannel,
    private readonly onCopyMarkdown: () => Promise<void>,
  ) {}

  get latest(): ShownDiagnosis | undefined {
    return this.current;
  }

  show(diagnosis: DenpexDiagnosis, origin: string, document?: vscode.Uri): void {
    this.current = { diagnosis, origin, document, prevention: new Map() };
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel(
        "denpex.diagnosis",
        "Denpex Diagnosis",
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: false },
        {
          enableScripts: true,
          enableCommandUris: false,
          localResourceRoots: [],
          retainContextWhenHidden: false,
        },
      );
      this.panel.onDidDispose(() => (this.panel = undefined));
      this.panel.webview.onDidReceiveMessage((m) => void this.onMessage(m));
    } else {
      this.panel.reveal(vscode.ViewColumn.Beside);
    }
    this.render();
    void this.fetchPrevention(this.current);
  }

  private render(): void {
    if (!this.panel || !this.current) return;
    this.panel.webview.html = renderDiagnosisHtml(
      this.current,
      nonce(),
      this.panel.webview.cspSource,
    );
  }

  private async fetchPrevention(shown: ShownDiagnosis): Promise<void> {
    const ids = [...new Set(shown.diagnosis.findings.map((f) => f.id))];
    for (const id of ids) {
      try {
        const entry = await this.server.sendRequest(CATALOG_ENTRY, { id });
        shown.prevention.set(id, entry.prevention);
      } catch (err) {
        this.log.debug(
          `no catalog entry for ${id}: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
    }
    if (this.current === shown && shown.prevention.size > 0) this.render();
  }

  private async onMessage(raw: unknown): Promise<void> {
    const message = parseDiagnosisViewMessage(raw);
    if (!message) return;
    switch (message.type) {
      case "openEvidence":
        await this.openEvidence(message.source, message.line);
        break;
      case "runInTerminal":
        runInVerifyTerminal(message.command);
        break;
      case "copy":
        await vscode.env.clipboard.writeText(message.command);
        void vscode.window.setStatusBarMessage("Denpex: command copied", 2000);
        break;
      case "copyMarkdown":
        await this.onCopyMarkdown();
        break;
    }
  }

  /** Evidence sources are file paths, URIs, or a terminal's name. */
  private resolveSource(source: string): vscode.Uri | undefined {
    const doc = this.current?.document;
    if (/^[a-z][a-z0-9+.-]+:\/\//i.test(source)) return vscode.Uri.parse(source);
    if (path.isAbsolute(source)) return vscode.Uri.file(source);
    if (
      doc &&
      (source === "<selection>" ||
        source === "<text>" ||
        source === path.basename(doc.fsPath) ||
        source === doc.toString())
    )
      return doc;
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (folder) return vscode.Uri.joinPath(folder.uri, source);
    return doc;
  }

  private async openEvidence(source: string, line: number): Promise<void> {
    const uri = this.resolveSource(source);
    const target = uri ?? this.current?.document;
    if (!target) {
      void vscode.window.showInformationMessage(
        `Denpex: "${source}" is not a file (terminal output cannot be opened).`,
      );
      return;
    }
    try {
      const document = await vscode.workspace.openTextDocument(target);
      const pos = new vscode.Position(Math.min(line - 1, document.lineCount - 1), 0);
      await vscode.window.showTextDocument(document, {
        viewColumn: vscode.ViewColumn.One,
        selection: new vscode.Range(pos, pos),
      });
    } catch {
      // A relative source that does not exist under the workspace: fall back to the diagnosed document.
      if (this.current?.document && target.toString() !== this.current.document.toString())
        return this.openEvidenceIn(this.current.document, line);
      void vscode.window.showInformationMessage(`Denpex: cannot open ${source}.`);
    }
  }

  private async openEvidenceIn(uri: vscode.Uri, line: number): Promise<void> {
    const document = await vscode.workspace.openTextDocument(uri);
    const pos = new vscode.Position(Math.min(line - 1, document.lineCount - 1), 0);
    await vscode.window.showTextDocument(document, {
      viewColumn: vscode.ViewColumn.One,
      selection: new vscode.Range(pos, pos),
    });
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
