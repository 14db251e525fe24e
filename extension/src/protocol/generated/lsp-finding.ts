/* Generated from shared-schema/lsp-finding.schema.json by extension/scripts/gen-protocol.mjs. Do not edit. */

/**
 * A failure appeared in a terminal's output. Sent once per failure (catalog id) per command, after the output pauses or the command ends; the diagnosis lists all findings, root cause first.
 */
export interface LspFinding {
  /**
   * The terminal's name (the evidence lines' source).
   */
  source: string;
  /**
   * The client's id for the terminal (kept as sent; compared as a string).
   */
  terminalId: string | number;
  /**
   * The finished command, when a command end was received.
   */
  commandLine: string | null;
  diagnosis: DenpexDiagnosis;
}
/**
 * Output of `denpex diagnose --json`, of the language server's `denpex.diagnose` command and the payload of `denpex/finding`. Findings are ordered root cause first.
 */
export interface DenpexDiagnosis {
  /**
   * 2 since stop 16: each finding carries its ready phrases (initiator, collateral_ranks_text, suspect_ranks_text); a consumer that validates version 1 with additionalProperties false rejects them
   */
  schema_version: 2;
  findings: Finding[];
}
/**
 * This interface was referenced by `DenpexDiagnosis`'s JSON-Schema
 * via the `definition` "finding".
 */
export interface Finding {
  id: string;
  title: string;
  category: string;
  confidence: number;
  initiating_rank: number | null;
  /**
   * Items: This interface was referenced by `DenpexDiagnosis`'s JSON-Schema
   * via the `definition` "rank".
   */
  collateral_ranks: number[];
  /**
   * Items: This interface was referenced by `DenpexDiagnosis`'s JSON-Schema
   * via the `definition` "rank".
   */
  suspect_ranks: number[];
  host: string | null;
  gpu: number | null;
  evidence: Evidence[];
  root_cause: string;
  fix: string;
  verification: string[];
  related: string[];
  /**
   * One flag per verification command: true when it is safe to run as shown (every blank filled, every value taken from the log passed its check: host-name grammar, digits, printable path). A command flagged false is shown for the user to complete or check and is never offered to run.
   */
  verification_runnable?: boolean[];
  /**
   * The initiating rank, host and GPU as one phrase, ready to show: "rank 3 on node-7, GPU 3", "unknown rank on node-7", "not identified". Added by the producer; readers of older output fall back to the three fields.
   */
  initiator?: string;
  /**
   * collateral_ranks compressed as operators write rank sets ("0-2,4-5,7"); empty when there are none.
   */
  collateral_ranks_text?: string;
  /**
   * suspect_ranks compressed the same way; empty when there are none.
   */
  suspect_ranks_text?: string;
  /**
   * How sure the initiating rank is (or, without one, the suspect ranks), and why in one line. Absent or null when the finding names neither.
   */
  attribution?: Attribution | null;
}
/**
 * This interface was referenced by `DenpexDiagnosis`'s JSON-Schema
 * via the `definition` "evidence".
 */
export interface Evidence {
  source: string;
  line: number;
  text: string;
  rank: number | null;
  role: "initiating" | "collateral" | "context";
}
/**
 * This interface was referenced by `DenpexDiagnosis`'s JSON-Schema
 * via the `definition` "attribution".
 */
export interface Attribution {
  /**
   * high: the failing rank's own line or a desync report names it; medium: mapped from its pid or GPU, or a launcher's summary with a single failure; low: a launcher's summary that may be a first observer, or suspects only.
   */
  confidence: "high" | "medium" | "low";
  /**
   * One line, e.g. "first failure in causal order (job.log:46)", "only torchelastic's failure summary names it (signal 9)".
   */
  reason: string;
}

export const X_METHOD = "denpex/finding" as const;
