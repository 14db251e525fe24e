/* Generated from shared-schema/lsp-compare-checkpoints-params.schema.json by extension/scripts/gen-protocol.mjs. Do not edit. */

/**
 * Compare a run with a reference once, as `denpex drift RUN --ref REF [--noise-ref N] --json` does (two single checkpoints give one point, verdict single_point), on the configured drift.device. Runs in the drift worker; cancelling the request kills it. Input the worker cannot compare (no such path, no checkpoints, nothing comparable) is answered with an InternalError (-32603) and one line saying why.
 */
export interface LspCompareCheckpointsParams {
  /**
   * The run to check: a checkpoint folder, a probe fingerprint folder, or one checkpoint (file or model folder); a local path.
   */
  run: string;
  /**
   * The reference run (healthy), of the same kind as run; a local path.
   */
  ref: string;
  /**
   * A second healthy run: its distance from ref is the noise band (the result's noise_points).
   */
  noiseRef?: string;
}

export const X_METHOD = "denpex/compareCheckpoints" as const;
