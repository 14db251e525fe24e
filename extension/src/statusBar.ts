// The "Denpex" status item: server state, local-only mode and what is watched.
import * as vscode from "vscode";
import { readConfig } from "./config";
import type { ServerState } from "./server";
import type { StatusParams } from "./protocol/methods";

export class StatusItem implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(
    "denpex.status",
    vscode.StatusBarAlignment.Left,
    10,
  );
  private state: ServerState = "stopped";
  private reason: string | undefined;
  private status: StatusParams | undefined;

  constructor(private readonly terminalsIntegrated: () => number) {
    this.item.name = "Denpex";
    this.item.command = "denpex.showLogs";
    this.render();
    this.item.show();
  }

  setState(state: ServerState, reason?: string): void {
    this.state = state;
    this.reason = reason;
    this.render();
  }

  setStatus(status: StatusParams): void {
    this.status = status;
    this.render();
  }

  render(): void {
    const terminalWatch = readConfig().terminal.watch;
    const watching = this.status?.watching ?? [];
    const icon =
      this.state === "running"
        ? watching.length > 0
          ? "$(eye)"
          : "$(shield)"
        : this.state === "starting"
          ? "$(sync~spin)"
          : "$(error)";
    this.item.text = `${icon} Denpex`;
    this.item.backgroundColor =
      this.state === "failed" ? new vscode.ThemeColor("statusBarItem.errorBackground") : undefined;
    const md = new vscode.MarkdownString(undefined, true);
    md.appendMarkdown(
      `**Denpex** — ${this.state === "running" ? "local-only" : this.state}${this.reason ? `: ${escapeMd(this.reason)}` : ""}\n\n`,
    );
    md.appendMarkdown(
      "Everything runs on this machine; nothing leaves it (no network, no telemetry).\n\n",
    );
    md.appendMarkdown(
      `- Terminal watching: ${terminalWatch ? `on (${this.terminalsIntegrated()} shell-integrated terminal(s))` : "off"}\n`,
    );
    md.appendMarkdown(
      `- Checkpoint directories: ${watching.length > 0 ? watching.map((w) => `\`${escapeMd(w)}\``).join(", ") : "none"}\n`,
    );
    if (this.status?.missing && this.status.missing.length > 0)
      md.appendMarkdown(
        `- Missing: ${this.status.missing.map((w) => `\`${escapeMd(w)}\``).join(", ")}\n`,
      );
    if (this.status?.reference)
      md.appendMarkdown(`- Reference run: \`${escapeMd(this.status.reference)}\`\n`);
    if (this.status?.lastCheck)
      md.appendMarkdown(`- Last drift check: ${escapeMd(this.status.lastCheck)}\n`);
    if (this.status) md.appendMarkdown(`- Log documents diagnosed: ${this.status.documents}\n`);
    if (this.status && this.status.blockedConnections > 0)
      md.appendMarkdown(`- Blocked network attempts: ${this.status.blockedConnections}\n`);
    md.appendMarkdown("\nClick to show the logs.");
    this.item.tooltip = md;
  }

  dispose(): void {
    this.item.dispose();
  }
}

function escapeMd(s: string): string {
  return s.replace(/[\\`*_{}[\]()#+\-.!|<>]/g, "\\$&");
}
