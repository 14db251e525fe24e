/* Generated from shared-schema/lsp-status.schema.json by extension/scripts/gen-protocol.mjs. Do not edit. */

/**
 * What the server watches and its privacy mode. Sent after initialization, on settings changes, on watch changes and after each drift check; denpex/getStatus (a request without params) returns the same object.
 */
export interface LspStatus {
  /**
   * Checkpoint directories being watched.
   */
  watching: string[];
  /**
   * Configured directories that do not exist or were deleted (not watched).
   */
  missing: string[];
  reference: string | null;
  /**
   * ISO 8601 time of the last drift check.
   */
  lastCheck: string | null;
  privacy: "local-only";
  /**
   * Network operations the local-only guard refused in this server process (0 in normal use).
   */
  blockedConnections: number;
  /**
   * Log documents being diagnosed.
   */
  documents: number;
  terminals: number;
  /**
   * Only with `denpex serve --check-guard`: "refused" when the guard stopped a test connection.
   */
  guardSelfTest?: string;
}

export const X_METHOD = "denpex/status" as const;
