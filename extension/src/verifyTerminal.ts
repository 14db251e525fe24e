// Verification commands run in one reused terminal named "Denpex verify".
import * as vscode from "vscode";

export const VERIFY_TERMINAL = "Denpex verify";

export function runInVerifyTerminal(command: string, name = VERIFY_TERMINAL): vscode.Terminal {
  const existing = vscode.window.terminals.find((t) => t.name === name && t.exitStatus === undefined);
  const terminal = existing ?? vscode.window.createTerminal({ name });
  terminal.show(false);
  // Commands with unfilled placeholders (<gpu>, <host>) are typed but not run: the user
  // completes them first.
  terminal.sendText(command, !/<[a-z_]+>/.test(command));
  return terminal;
}
