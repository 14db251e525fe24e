// Denpex's custom LSP messages (names fixed by the server's contract, issue 4) with their
// payload types. Payload types come from the generated mirror of shared-schema/ where the
// schema exists; the extension and the protocol tests both import from here.
import type { DenpexDiagnosis } from "./generated/diagnosis";

export type { DenpexDiagnosis, Finding, Evidence } from "./generated/diagnosis";

/** client → server: raw terminal output, escapes included. */
export const TERMINAL_DATA = "denpex/terminalData";
export interface TerminalDataParams {
  terminalId: string;
  name: string;
  data: string;
}

/** client → server: a shell-integrated command finished. */
export const TERMINAL_COMMAND_END = "denpex/terminalCommandEnd";
export interface TerminalCommandEndParams {
  terminalId: string;
  commandLine: string;
  exitCode: number | null;
}

/** server → client: a failure appeared in terminal output (once per failure). */
export const FINDING = "denpex/finding";
export interface FindingParams {
  source: string;
  diagnosis: DenpexDiagnosis;
}

/** server → client: a drift report for a watched run was computed. */
export const DRIFT_UPDATE = "denpex/driftUpdate";
export interface DriftUpdateParams {
  report: DriftReport;
}

/** server → client: what is watched, last check, privacy mode. */
export const STATUS = "denpex/status";
export interface StatusParams {
  watching?: { logs?: string[]; terminals?: number | boolean; checkpoints?: string[] } | string[];
  lastCheck?: string | null;
  privacy?: string;
  [key: string]: unknown;
}

/** client → server request: a catalog entry as markdown. */
export const CATALOG_ENTRY = "denpex/catalogEntry";
export interface CatalogEntryParams {
  id: string;
}
export interface CatalogEntryResult {
  id: string;
  title: string;
  category: string;
  markdown: string;
}

/** workspace/executeCommand run by the server. */
export const DIAGNOSE_COMMAND = "denpex.diagnose";
export interface DiagnoseArgs {
  text?: string;
  uri?: string;
  range?: { start: { line: number; character: number }; end: { line: number; character: number } };
}

/** Client-side commands the server's code actions carry. */
export const RUN_IN_TERMINAL = "denpex.runInTerminal";
export interface RunInTerminalArgs {
  command: string;
  name?: string;
}
export const COPY_TO_CLIPBOARD = "denpex.copyToClipboard";
export interface CopyToClipboardArgs {
  text: string;
}
export const SHOW_CATALOG_ENTRY = "denpex.showCatalogEntry";
export interface ShowCatalogEntryArgs {
  id: string;
}

/** The subset of shared-schema/drift-report.schema.json the drift view draws. */
export interface DriftReport {
  schema_version: 1;
  mode: "reference" | "replicas";
  run: string;
  reference: string | null;
  points: { step: number; l2: number; rel_l2: number; [key: string]: unknown }[];
  verdict: string;
  flagged: boolean;
  onset_step: number | null;
  faulty_rank: number | null;
  [key: string]: unknown;
}
