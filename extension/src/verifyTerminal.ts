// Verification commands are typed into one reused terminal named "Denpex verify".
import * as vscode from "vscode";
import { VERIFY_TERMINAL } from "./protocol/methods";

// A line break or control character typed into a terminal acts as a key press (Enter, ^C).
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

export function runInVerifyTerminal(
  command: string,
  name = VERIFY_TERMINAL,
): vscode.Terminal | undefined {
  if (CONTROL.test(command)) {
    // The server writes such characters as $'\x..' escapes; a command holding one raw did not
    // come from it. Typing it would run what precedes the line break.
    void vscode.window.showErrorMessage(
      "Denpex: not typing a command that contains a line break or control character.",
    );
    return undefined;
  }
  const existing = vscode.window.terminals.find(
    (t) => t.name === name && t.exitStatus === undefined,
  );
  const terminal = existing ?? vscode.window.createTerminal({ name });
  terminal.show(false);
  // Typed, never run: the command is built from log text and file names that someone else
  // wrote, so the user reads it and presses Enter.
  terminal.sendText(command, false);
  return terminal;
}
