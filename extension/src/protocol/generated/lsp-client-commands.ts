/* Generated from shared-schema/lsp-client-commands.schema.json by extension/scripts/gen-protocol.mjs. Do not edit. */

/**
 * Code actions carry these commands for the client to execute (each with one argument object). They are not in the server's executeCommandProvider: VS Code's extension registers them; Neovim users define them in vim.lsp.commands (see docs/language-server.md). denpex.diagnose, also used by a code action, is executed by the server.
 */
export interface LspClientCommands {
  [k: string]: unknown | undefined;
}
/**
 * This interface was referenced by `LspClientCommands`'s JSON-Schema
 * via the `definition` "denpex.runInTerminal".
 */
export interface DenpexRunInTerminal {
  /**
   * A shell command line (a verification command flagged runnable), typed into a terminal without Enter: the user reads it and runs it.
   */
  command: string;
  /**
   * The terminal to use. The server never announces failures printed in a terminal of this name: verification commands grep the failure on purpose.
   */
  name: "Denpex verify";
}
/**
 * This interface was referenced by `LspClientCommands`'s JSON-Schema
 * via the `definition` "denpex.copyToClipboard".
 */
export interface DenpexCopyToClipboard {
  text: string;
}
/**
 * This interface was referenced by `LspClientCommands`'s JSON-Schema
 * via the `definition` "denpex.showCatalogEntry".
 */
export interface DenpexShowCatalogEntry {
  /**
   * Fetch the page with the denpex/catalogEntry request and show it.
   */
  id: string;
}
