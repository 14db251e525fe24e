// The drift view: latest report per run, redrawn when denpex/driftUpdate arrives.
import * as vscode from "vscode";
import { readConfig } from "./config";
import { DriftStore } from "./core/driftSeries";
import { renderDriftHtml } from "./core/driftHtml";
import type { DriftReport } from "./protocol/methods";
import { nonce } from "./webviewNonce";

export class DriftPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  readonly store = new DriftStore();

  update(report: DriftReport): void {
    const noise = readConfig().checkpoints.noiseReference;
    this.store.update(report, noise || undefined);
    this.render();
  }

  show(): void {
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel(
        "denpex.drift",
        "Denpex Drift",
        vscode.ViewColumn.Beside,
        {
          enableScripts: false,
          enableCommandUris: false,
          localResourceRoots: [],
        },
      );
      this.panel.onDidDispose(() => (this.panel = undefined));
    } else {
      this.panel.reveal();
    }
    this.render();
  }

  private render(): void {
    if (!this.panel) return;
    this.panel.webview.html = renderDriftHtml(
      this.store.all(),
      nonce(),
      this.panel.webview.cspSource,
    );
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
