/* Generated from shared-schema/lsp-diagnose-params.schema.json by extension/scripts/gen-protocol.mjs. Do not edit. */

/**
 * Diagnoses text and returns the diagnosis (diagnosis.schema.json). Give `text` (a selection; with `range`, its lines are numbered from range.start.line), or `uri` + `range` of a document the server has open (the server reads the lines), or `terminalId` (the last command's output buffered by the server). With `uri`, the diagnostics are also published on that document, replacing those of the previous denpex.diagnose there. Bad arguments are answered with an InvalidParams (-32602) error.
 */
export type LspDiagnoseParams = {
  [k: string]: unknown | undefined;
} & {
  text?: string;
  uri?: string;
  range?: Range;
  /**
   * The client's id for the terminal (kept as sent; compared as a string).
   */
  terminalId?: string | number;
};

/**
 * This interface was referenced by `undefined`'s JSON-Schema
 * via the `definition` "range".
 */
export interface Range {
  start: Position;
  end: Position;
}
/**
 * This interface was referenced by `undefined`'s JSON-Schema
 * via the `definition` "position".
 */
export interface Position {
  line: number;
  character: number;
}

export const X_METHOD = "workspace/executeCommand denpex.diagnose" as const;
