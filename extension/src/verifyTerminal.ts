// Verification commands are typed into one reused terminal named "Denpex verify".
import * as vscode from "vscode";

export const VERIFY_TERMINAL = "Denpex verify";

export function runInVerifyTerminal(command: string, name = VERIFY_TERMINAL): vscode.Terminal {
  const existing = vscode.window.terminals.find((t) => t.name === name && t.exitStatus === undefined);
  const terminal = existing ?? vscode.window.createTerminal({ name });
  terminal.show(false);
  // Typed, never run: the command is built from log text and file names that someone else
  // wrote, so the user reads it and presses Enter. The server quotes every value and
  // writes control characters as $'\x..' escapes, so one command stays one line.
  terminal.sendText(command, false);
  return terminal;
}
