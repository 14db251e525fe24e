/* Generated from shared-schema/lsp-terminal-data.schema.json by extension/scripts/gen-protocol.mjs. Do not edit. */

/**
 * A raw chunk of terminal output, escape sequences included. Chunks may split lines and escape sequences anywhere; the server reassembles them. Malformed params are logged and ignored.
 */
export interface LspTerminalData {
  /**
   * The client's id for the terminal (kept as sent; compared as a string).
   */
  terminalId: string | number;
  /**
   * The terminal's display name; used as the evidence source.
   */
  name?: string;
  data: string;
}

export const X_METHOD = "denpex/terminalData" as const;
