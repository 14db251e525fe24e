/* Generated from shared-schema/drift-report.schema.json by extension/scripts/gen-protocol.mjs. Do not edit. */

/**
 * This interface was referenced by `DriftReport`'s JSON-Schema
 * via the `definition` "point".
 */
export type Point = Figures & {
  step: number;
  warnings: string[];
  /**
   * where this step's data was read from (the checkpoint, or the probe fingerprint file); absent when unknown. Added within version 1 (additive)
   */
  file?: string;
  /**
   * 1-based line in file: a probe record's, else 1. Added within version 1 (additive)
   */
  line?: number;
  /**
   * replica mode: rank (as a string) -> that rank's figures against the majority; the point's own figures are those of the rank farthest from it
   */
  ranks?: {
    [k: string]: Figures | undefined;
  };
  /**
   * replica mode: ranks with any difference from the majority, a missing or extra tensor, non-finite values, or no readable checkpoint at this step
   */
  disagreeing_ranks?: number[];
  /**
   * replica mode: rank (as a string) -> why it has no readable checkpoint at this step; an absent rank disagrees
   */
  absent_ranks?: {
    /**
     * This interface was referenced by `undefined`'s JSON-Schema definition
     * via the `patternProperty` "^[0-9]+$".
     */
    [k: string]: string | undefined;
  };
};
/**
 * This interface was referenced by `DriftReport`'s JSON-Schema
 * via the `definition` "figure".
 */
export type Figure = number | null;

/**
 * Output of `denpex drift --json` and `denpex replicas --json`, and of denpex.drift.api.drift_report / replicas_report (the language server's drift results). Distances are float64 sums; null stands for a non-finite figure (NaN/Inf weights).
 */
export interface DriftReport {
  /**
   * 3 since issue 9: optional replicas (a per-rank run's ranks compared with each other) was added; 2 since stop 16: optional noise_points, each point's file and line, and the single_point verdict were added; a consumer that validates version 1 with additionalProperties false rejects them
   */
  schema_version: 3;
  /**
   * reference: RUN against REF; replicas: each data-parallel rank against the majority
   */
  mode: "reference" | "replicas";
  run: string;
  /**
   * the reference run; null in replica mode (the majority of the ranks is the reference)
   */
  reference: string | null;
  /**
   * --noise-ref: a second healthy run that calibrated the noise floor
   */
  noise_reference: string | null;
  /**
   * replica mode: per-tensor max |Δ| forgiven
   */
  tolerance?: number;
  /**
   * where the reductions ran: cpu, cuda, cuda:N
   */
  device: string;
  /**
   * one per compared checkpoint step, ascending
   */
  points: Point[];
  /**
   * reference mode with a noise reference: the noise run's own points against the same reference, ascending (the benign band behind the run); absent otherwise. Added within version 1 (additive)
   */
  noise_points?: Point[];
  /**
   * reference mode on a per-rank layout whose ranks hold the same tensors (data-parallel replicas): the run's ranks compared with each other at each step as `denpex replicas` does (bitwise, by majority; NaN or a missing rank is never identical); absent otherwise
   */
  replicas?: {
    /**
     * `denpex replicas`' verdict on the run's ranks
     */
    verdict: "identical" | "replica_divergence" | "not_comparable";
    ranks: number[];
    /**
     * the first step where a rank differs from the majority; null when none does
     */
    first_divergence_step: number | null;
    /**
     * the rank that differs first (then most often)
     */
    divergent_rank: number | null;
    /**
     * ascending
     */
    steps: {
      step: number;
      /**
       * every rank bit-identical to the others at this step
       */
      identical: boolean;
      disagreeing_ranks: number[];
    }[];
    /**
     * `denpex replicas`' notes
     */
    notes: string[];
  };
  /**
   * see docs/drift-statistics.md; step_change, not_comparable and single_point were added within version 1 (additive): not_comparable means no tensor could be compared, or the run and the reference were already different models at the first compared checkpoint (trend.parted_step), so nothing can be judged (exit code 2); single_point means two single checkpoints (files or model folders) differ, and one point cannot show a trend, so it is neither cleared nor flagged (exit code 0)
   */
  verdict:
    | "identical"
    | "within_noise"
    | "gradual_drift"
    | "sudden_jump"
    | "step_change"
    | "replica_divergence"
    | "not_comparable"
    | "single_point";
  /**
   * true when the verdict is a finding (exit code 1)
   */
  flagged: boolean;
  /**
   * first checkpoint step where the series leaves the noise floor
   */
  onset_step: number | null;
  /**
   * replica mode: the rank that disagrees with the majority; reference mode on a per-rank layout: the rank whose drift departs from the rest
   */
  faulty_rank: number | null;
  /**
   * the verdict's statistics (trend test, slope, shape, noise floor); keys defined by denpex.drift.verdict
   */
  trend: {};
  finding: Finding | null;
  /**
   * how the verdict was reached, in words
   */
  notes: string[];
  /**
   * skipped checkpoints, steps in one run only, tensors not compared, precision used
   */
  warnings: string[];
}
/**
 * This interface was referenced by `undefined`'s JSON-Schema definition
 * via the `patternProperty` "^[0-9]+$".
 *
 * This interface was referenced by `DriftReport`'s JSON-Schema
 * via the `definition` "figures".
 */
export interface Figures {
  /**
   * global L2 distance over all compared tensors
   */
  l2: number | null;
  /**
   * l2 / the reference's global norm
   */
  rel_l2: number | null;
  max_abs: Figure;
  /**
   * elements that differ at the compared precision
   */
  mismatched_elements: number;
  /**
   * elements whose difference is NaN/Inf (either side non-finite)
   */
  non_finite_elements?: number;
  tensors_compared?: number;
  /**
   * tensors present on one side only, with different shapes, or unreadable
   */
  tensors_missing?: Missing[];
  /**
   * the precision compared at, or "mixed"
   */
  compared_dtype?: string | null;
  /**
   * largest contributors to l2, largest first (at most 5, zero distances left out)
   */
  top_tensors: Tensor[];
}
/**
 * This interface was referenced by `DriftReport`'s JSON-Schema
 * via the `definition` "missing".
 */
export interface Missing {
  name: string;
  status: "missing_in_run" | "missing_in_ref" | "shape_mismatch" | "unreadable";
  note: string;
}
/**
 * This interface was referenced by `DriftReport`'s JSON-Schema
 * via the `definition` "tensor".
 */
export interface Tensor {
  /**
   * normalised parameter name (module./_orig_mod. stripped)
   */
  name: string;
  l2: Figure;
  /**
   * l2 / the reference tensor's norm
   */
  rel_l2?: number | null;
  max_abs?: Figure;
  mismatched_elements?: number;
  /**
   * elements whose difference is NaN/Inf (either side non-finite): each one disagrees
   */
  non_finite_elements?: number;
  numel?: number;
  /**
   * dim 0 (1-D tensors: their length)
   */
  rows?: number;
  /**
   * length of dim 1, the columns its spread is measured over (a conv kernel's taps are summed into their input channel; 1-D tensors: 1)
   */
  cols?: number;
  top_row?: number;
  /**
   * share of the squared distance in the largest row
   */
  top_row_share?: number | null;
  top_col?: number;
  /**
   * share of the squared distance in the largest column
   */
  top_col_share?: number | null;
  /**
   * the lower precision of the pair, at which elements were compared
   */
  compared_dtype?: string;
}
export interface Finding {
  id: string;
  title: string;
  category: string;
  confidence: number;
  initiating_rank: number | null;
  collateral_ranks: number[];
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
export interface Evidence {
  source: string;
  line: number;
  text: string;
  rank: number | null;
  role: "initiating" | "collateral" | "context";
}
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
