/* Generated from shared-schema/lsp-terminal-closed.schema.json by extension/scripts/gen-protocol.mjs. Do not edit. */

/**
 * The terminal is gone: the server frees its buffer.
 */
export interface LspTerminalClosed {
  /**
   * The client's id for the terminal (kept as sent; compared as a string).
   */
  terminalId: string | number;
}

export const X_METHOD = "denpex/terminalClosed" as const;
