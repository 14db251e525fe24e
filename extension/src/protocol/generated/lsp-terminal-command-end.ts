/* Generated from shared-schema/lsp-terminal-command-end.schema.json by extension/scripts/gen-protocol.mjs. Do not edit. */

/**
 * A shell-integrated command finished. Completes the last unterminated line, triggers a final check, and starts a fresh scanner for the next command's output.
 */
export interface LspTerminalCommandEnd {
  /**
   * The client's id for the terminal (kept as sent; compared as a string).
   */
  terminalId: string | number;
  name?: string;
  commandLine?: string | null;
  /**
   * Undefined exit codes are sent as null.
   */
  exitCode?: number | null;
}

export const X_METHOD = "denpex/terminalCommandEnd" as const;
