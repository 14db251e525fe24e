// Terminal watching through shell integration: each command's output is read from its
// start, kept as a bounded tail for "Diagnose Terminal Output", and (with
// denpex.terminal.watch) forwarded raw to the server, which sends denpex/finding once per
// failure. Terminals without shell integration simply produce no events.
import * as vscode from "vscode";
import { TailBuffer, splitForTransport } from "./core/ansi";
import type { ServerManager } from "./server";
import { VERIFY_TERMINAL } from "./verifyTerminal";
import { TERMINAL_CLOSED, TERMINAL_COMMAND_END, TERMINAL_DATA, type TerminalCommandEndParams, type TerminalDataParams } from "./protocol/methods";

const TAIL_CHARS = 512 * 1024;
const MAX_CHUNK = 64 * 1024;

export interface CommandOutput {
  readonly terminalName: string;
  readonly commandLine: string;
  readonly text: string;
  readonly truncated: boolean;
}

export class TerminalWatcher implements vscode.Disposable {
  private readonly ids = new WeakMap<vscode.Terminal, string>();
  private nextId = 1;
  private readonly last = new Map<string, { commandLine: string; buffer: TailBuffer; terminalName: string }>();
  private readonly reading = new WeakMap<vscode.TerminalShellExecution, Promise<void>>();
  private readonly disposables: vscode.Disposable[] = [];
  private integrated = 0;

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
    return this.integrated;
  }

  /**
   * Whether this terminal's output goes to the server. Not for "Denpex verify": its commands
   * grep the failure on purpose, and reporting that back as a new failure would be noise.
   */
  private forwarding(terminal: vscode.Terminal): boolean {
    return terminal.name !== VERIFY_TERMINAL && vscode.workspace.getConfiguration("denpex").get<boolean>("terminal.watch", true);
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
    if (!this.last.has(terminalId)) this.integrated++;
    // The name as the command starts: VS Code retitles the terminal after whatever process runs
    // (a finding "in terminal sleep" helps nobody), so later chunks keep this one.
    const entry = { commandLine: e.execution.commandLine.value, buffer: new TailBuffer(TAIL_CHARS), terminalName: e.terminal.name };
    this.last.set(terminalId, entry);
    const read = (async () => {
      try {
        for await (const data of e.execution.read()) {
          entry.buffer.push(data);
          if (!this.forwarding(e.terminal)) continue;
          for (const part of splitForTransport(data, MAX_CHUNK)) {
            const params: TerminalDataParams = { terminalId, name: entry.terminalName, data: part };
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
    if (!this.forwarding(e.terminal)) return;
    const params: TerminalCommandEndParams = {
      terminalId,
      name: this.last.get(terminalId)?.terminalName ?? e.terminal.name,
      commandLine: e.execution.commandLine.value || null,
      exitCode: e.exitCode ?? null,
    };
    this.server.sendNotification(TERMINAL_COMMAND_END, params);
  }

  private onClose(terminal: vscode.Terminal): void {
    const id = this.ids.get(terminal);
    if (!id) return;
    this.last.delete(id);
    this.server.sendNotification(TERMINAL_CLOSED, { terminalId: id });
  }

  /** The last command's output in this terminal, when shell integration reported it. */
  lastOutput(terminal: vscode.Terminal): CommandOutput | undefined {
    const entry = this.last.get(this.idOf(terminal));
    if (!entry) return undefined;
    return { terminalName: entry.terminalName, commandLine: entry.commandLine, text: entry.buffer.text(), truncated: entry.buffer.truncated };
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
