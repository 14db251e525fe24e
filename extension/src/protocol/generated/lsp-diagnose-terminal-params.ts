/* Generated from shared-schema/lsp-diagnose-terminal-params.schema.json by extension/scripts/gen-protocol.mjs. Do not edit. */

/**
 * Diagnoses the output of a terminal's current (or last finished) command, as buffered by the server from denpex/terminalData: escape sequences stripped, progress-bar redraws resolved, at most the last 5000 lines. A terminal the server holds no output for is answered with lines 0 (the client may send what the terminal shows to denpex.diagnose instead). A missing terminalId is answered with InvalidParams (-32602).
 */
export interface LspDiagnoseTerminalParams {
  /**
   * The client's id for the terminal, as sent with denpex/terminalData.
   */
  terminalId: string | number;
}

export const X_METHOD = "denpex/diagnoseTerminal" as const;
