/* Generated from shared-schema/lsp-diagnose-params.schema.json by extension/scripts/gen-protocol.mjs. Do not edit. */

/**
 * Diagnoses text and returns the diagnosis (diagnosis.schema.json). Give `text` (a selection; with `range`, its lines are numbered from range.start.line), or `uri` + `range` of a document the server has open (the server reads the lines), or `terminalId` (the last command's output buffered by the server), or `folder` (a job folder, read as `denpex diagnose DIR` reads it: every file under it, logs and Flight Recorder dumps, in the server's dump worker process). With `uri`, the diagnostics are also published on that document, replacing those of the previous denpex.diagnose there; with `folder`, on the lines of the folder's logs, replacing those of the previous denpex.diagnose on that folder. Bad arguments are answered with an InvalidParams (-32602) error; a folder that cannot be diagnosed (no files, more than 300 s of reading) with an InternalError (-32603) naming the reason.
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
  /**
   * A file: URI of a job folder.
   */
  folder?: string;
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
