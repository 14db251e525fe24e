// Denpex's custom LSP messages with their payload types. Types come from the generated
// mirror of shared-schema/ (npm run gen:protocol); each method constant is typed by the
// schema's own x-method, so a renamed method fails the type check instead of failing live.
import type * as g from "./generated";

export type { Diagnosis as DenpexDiagnosis, Finding, Evidence } from "./generated/diagnosis";

/** client → server notification: raw terminal output, escapes included. */
export const TERMINAL_DATA: typeof g.lspTerminalData.X_METHOD = "denpex/terminalData";
export type TerminalDataParams = g.lspTerminalData.LspTerminalData;

/** client → server notification: a shell-integrated command finished. */
export const TERMINAL_COMMAND_END: typeof g.lspTerminalCommandEnd.X_METHOD =
  "denpex/terminalCommandEnd";
export type TerminalCommandEndParams = g.lspTerminalCommandEnd.LspTerminalCommandEnd;

/** client → server notification: the terminal is gone. */
export const TERMINAL_CLOSED: typeof g.lspTerminalClosed.X_METHOD = "denpex/terminalClosed";
export type TerminalClosedParams = g.lspTerminalClosed.LspTerminalClosed;

/** server → client notification: a failure appeared in terminal output (once per failure). */
export const FINDING: typeof g.lspFinding.X_METHOD = "denpex/finding";
export type FindingParams = g.lspFinding.LspFinding;

/** server → client notification: what is watched; also the denpex/getStatus result. */
export const STATUS: typeof g.lspStatus.X_METHOD = "denpex/status";
export const GET_STATUS = "denpex/getStatus";
export type StatusParams = g.lspStatus.LspStatus;

/** client → server request: one catalog entry, its lists as data and its page as Markdown. */
export const CATALOG_ENTRY: typeof g.lspCatalogEntryParams.X_METHOD = "denpex/catalogEntry";
export type CatalogEntryParams = g.lspCatalogEntryParams.LspCatalogEntryParams;
export type CatalogEntryResult = g.lspCatalogEntryResult.LspCatalogEntryResult;

/** client → server request (no params): every catalog entry's id, title, category and tags. */
export const CATALOG_LIST: typeof g.lspCatalogListResult.X_METHOD = "denpex/catalogList";
export type CatalogListResult = g.lspCatalogListResult.LspCatalogListResult;

/** client → server request: diagnose a terminal's last command from the server's buffer. */
export const DIAGNOSE_TERMINAL: typeof g.lspDiagnoseTerminalParams.X_METHOD =
  "denpex/diagnoseTerminal";
export type DiagnoseTerminalParams = g.lspDiagnoseTerminalParams.LspDiagnoseTerminalParams;
export type DiagnoseTerminalResult = g.lspDiagnoseTerminalResult.LspDiagnoseTerminalResult;

/** client → server request: a diagnosis as ticket-ready Markdown, redacted on request. */
export const DIAGNOSIS_MARKDOWN: typeof g.lspDiagnosisMarkdownParams.X_METHOD =
  "denpex/diagnosisMarkdown";
export type DiagnosisMarkdownParams = g.lspDiagnosisMarkdownParams.LspDiagnosisMarkdownParams;
export type DiagnosisMarkdownResult = g.lspDiagnosisMarkdownResult.LspDiagnosisMarkdownResult;

/** client → server request: one run against a reference; the report has the noise run's points. */
export const COMPARE_CHECKPOINTS: typeof g.lspCompareCheckpointsParams.X_METHOD =
  "denpex/compareCheckpoints";
export type CompareCheckpointsParams = g.lspCompareCheckpointsParams.LspCompareCheckpointsParams;
export type CompareCheckpointsResult = g.lspCompareCheckpointsResult.LspCompareCheckpointsResult;

/** workspace/executeCommand run by the server; the result is a diagnosis. */
export const DIAGNOSE_COMMAND = "denpex.diagnose";
export type DiagnoseArgs = g.lspDiagnoseParams.LspDiagnoseParams;

/** Client-side commands the server's code actions carry (lsp-client-commands.schema.json). */
export const RUN_IN_TERMINAL = "denpex.runInTerminal";
export type RunInTerminalArgs = g.lspClientCommands.DenpexRunInTerminal;
/** The terminal verification commands are typed into; the schema fixes its name. */
export const VERIFY_TERMINAL: RunInTerminalArgs["name"] = "Denpex verify";
export const COPY_TO_CLIPBOARD = "denpex.copyToClipboard";
export type CopyToClipboardArgs = g.lspClientCommands.DenpexCopyToClipboard;
export const SHOW_CATALOG_ENTRY = "denpex.showCatalogEntry";
export type ShowCatalogEntryArgs = g.lspClientCommands.DenpexShowCatalogEntry;

/** server → client notification: a drift check completed. */
export const DRIFT_UPDATE: typeof g.lspDriftUpdate.X_METHOD = "denpex/driftUpdate";
export type DriftUpdateParams = g.lspDriftUpdate.LspDriftUpdate;
export type DriftReport = g.driftReport.DriftReport;

/** Each client → server request with its params and result, so calls need no casts. */
export interface Requests {
  [CATALOG_LIST]: [Record<string, never>, CatalogListResult];
  [CATALOG_ENTRY]: [CatalogEntryParams, CatalogEntryResult];
  [DIAGNOSE_TERMINAL]: [DiagnoseTerminalParams, DiagnoseTerminalResult];
  [DIAGNOSIS_MARKDOWN]: [DiagnosisMarkdownParams, DiagnosisMarkdownResult];
  [COMPARE_CHECKPOINTS]: [CompareCheckpointsParams, CompareCheckpointsResult];
  [GET_STATUS]: [Record<string, never>, StatusParams];
}

/** Each client → server notification with its params. */
export interface ClientNotifications {
  [TERMINAL_DATA]: TerminalDataParams;
  [TERMINAL_COMMAND_END]: TerminalCommandEndParams;
  [TERMINAL_CLOSED]: TerminalClosedParams;
}

/** Each server → client notification with its params. */
export interface ServerNotifications {
  [FINDING]: FindingParams;
  [STATUS]: StatusParams;
  [DRIFT_UPDATE]: DriftUpdateParams;
}
