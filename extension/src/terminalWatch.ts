// Terminal watching through shell integration: each command's output is forwarded raw to
// the server, which strips the escapes, keeps a bounded tail per terminal for "Diagnose
// Terminal Output" (denpex/diagnoseTerminal) and, as denpex.terminal.watch says, sends
// denpex/finding once per failure. Terminals without shell integration produce no events.
import * as vscode from "vscode";
import { splitForTransport } from "./core/transport";
import type { ServerManager } from "./server";
import {
  TERMINAL_CLOSED,
  TERMINAL_COMMAND_END,
  TERMINAL_DATA,
  type TerminalCommandEndParams,
  type TerminalDataParams,
} from "./protocol/methods";

const MAX_CHUNK = 64 * 1024;

export class TerminalWatcher implements vscode.Disposable {
  private readonly ids = new WeakMap<vscode.Terminal, string>();
  private nextId = 1;
  // The name as a terminal's command starts: VS Code retitles the terminal after whatever
  // process runs (a finding "in terminal sleep" helps nobody), so later chunks keep this one.
  private readonly names = new Map<string, string>();
  private readonly reading = new WeakMap<vscode.TerminalShellExecution, Promise<void>>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly server: ServerManager,
    private readonly log: vscode.LogOutputChannel,
  ) {
    // Both events exist from VS Code 1.93; guard anyway so an older host degrades quietly.
    if (typeof vscode.window.onDidStartTerminalShellExecution !== "function") {
      log.info("terminal shell integration API unavailable: terminal watching is off");
      return;
    }
    this.disposables.push(
      vscode.window.onDidStartTerminalShellExecution((e) => this.onStart(e)),
      vscode.window.onDidEndTerminalShellExecution((e) => void this.onEnd(e)),
      vscode.window.onDidCloseTerminal((t) => this.onClose(t)),
    );
  }

  /** Terminals that have reported at least one shell-integrated command. */
  get integratedTerminals(): number {
    return this.names.size;
  }

  /** Whether the server has received this terminal's output (shell integration reported it). */
  isIntegrated(terminal: vscode.Terminal): boolean {
    const id = this.ids.get(terminal);
    return id !== undefined && this.names.has(id);
  }

  idOf(terminal: vscode.Terminal): string {
    let id = this.ids.get(terminal);
    if (!id) {
      id = `t${this.nextId++}`;
      this.ids.set(terminal, id);
    }
    return id;
  }

  private onStart(e: vscode.TerminalShellExecutionStartEvent): void {
    const terminalId = this.idOf(e.terminal);
    const name = e.terminal.name;
    this.names.set(terminalId, name);
    const read = (async () => {
      try {
        for await (const data of e.execution.read()) {
          for (const part of splitForTransport(data, MAX_CHUNK)) {
            const params: TerminalDataParams = { terminalId, name, data: part };
            this.server.sendNotification(TERMINAL_DATA, params);
          }
        }
      } catch (err) {
        this.log.debug(`terminal ${terminalId}: stopped reading (${String(err)})`);
      }
    })();
    this.reading.set(e.execution, read);
  }

  private async onEnd(e: vscode.TerminalShellExecutionEndEvent): Promise<void> {
    const terminalId = this.idOf(e.terminal);
    // The end event can overtake the last chunks; let the reader drain first (bounded wait).
    const read = this.reading.get(e.execution);
    if (read) await Promise.race([read, new Promise((r) => setTimeout(r, 2000))]);
    const params: TerminalCommandEndParams = {
      terminalId,
      name: this.names.get(terminalId) ?? e.terminal.name,
      commandLine: e.execution.commandLine.value || null,
      exitCode: e.exitCode ?? null,
    };
    this.server.sendNotification(TERMINAL_COMMAND_END, params);
  }

  private onClose(terminal: vscode.Terminal): void {
    const id = this.ids.get(terminal);
    if (!id) return;
    this.names.delete(id);
    this.server.sendNotification(TERMINAL_CLOSED, { terminalId: id });
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

/**
 * Without shell integration, read what the terminal shows by selecting all and copying,
 * restoring the user's clipboard afterwards.
 */
export async function terminalScreenText(terminal: vscode.Terminal): Promise<string> {
  const saved = await vscode.env.clipboard.readText();
  try {
    terminal.show(true);
    await vscode.commands.executeCommand("workbench.action.terminal.selectAll");
    await vscode.commands.executeCommand("workbench.action.terminal.copySelection");
    await vscode.commands.executeCommand("workbench.action.terminal.clearSelection");
    return await vscode.env.clipboard.readText();
  } finally {
    await vscode.env.clipboard.writeText(saved);
  }
}
