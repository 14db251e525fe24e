/* Generated from shared-schema/catalog-entry.schema.json by extension/scripts/gen-protocol.mjs. Do not edit. */

/**
 * This interface was referenced by `CatalogEntry`'s JSON-Schema
 * via the `definition` "condition".
 */
export type Condition =
  | {
      kind: "requires";
      /**
       * @minItems 1
       */
      signals: [string, ...string[]];
    }
  | {
      kind: "min_count";
      signal: string;
      count: number;
    }
  | {
      kind: "value_jump";
      signal: string;
      ratio: number;
      warmup?: number;
    };

/**
 * One failure in Denpex's catalog. Stored as one TOML file per entry under server/denpex/catalog/entries/; rendered by `denpex catalog ID` and matched by the diagnosis engine through `signals` and `conditions`.
 */
export interface CatalogEntry {
  /**
   * Stable id; also the file name.
   */
  id: string;
  title: string;
  category:
    | "communication"
    | "memory"
    | "numerics"
    | "hardware"
    | "cuda"
    | "data"
    | "checkpoint"
    | "process"
    | "data-integrity"
    | "configuration";
  /**
   * @minItems 1
   */
  tags: [string, ...string[]];
  quick_answer: string;
  mechanism: string;
  /**
   * @minItems 1
   */
  symptoms: [
    {
      symptom: string;
      why: string;
    },
    ...{
      symptom: string;
      why: string;
    }[]
  ];
  /**
   * Log patterns that point at this entry. Empty for entries found only by the drift engine.
   */
  signals: Signal[];
  /**
   * Its reports mean the collectives hung: when it fires, a rank missing from the reports is a suspect, and a launcher's report of a rank that aborted (SIGABRT) or exited with an error code is the watchdog taking that rank down, never the rank that started the failure.
   */
  hang?: boolean;
  /**
   * Its lines report how a process ended, not why: when they start after an incident's first failure, they are that failure's exit, and any other entry of the incident names it (a rank that raised, then aborted in teardown).
   */
  exit_report?: boolean;
  /**
   * Structured conditions, all of which must hold for the entry to be reported (in addition to at least one matching signal).
   */
  conditions?: Condition[];
  /**
   * @minItems 1
   */
  affected_systems: [string, ...string[]];
  /**
   * How to confirm: a checklist.
   *
   * @minItems 1
   */
  confirm: [string, ...string[]];
  /**
   * Ordered fix steps.
   *
   * @minItems 1
   */
  fix: [string, ...string[]];
  /**
   * @minItems 1
   */
  prevention: [string, ...string[]];
  /**
   * @minItems 1
   */
  verification: [Verification, ...Verification[]];
  /**
   * The signal to monitor so a recurrence is caught.
   */
  fingerprint: string;
  related: string[];
  /**
   * @minItems 1
   */
  references: [
    {
      title: string;
      /**
       * Upstream project, doc page or issue, by name.
       */
      where?: string;
    },
    ...{
      title: string;
      /**
       * Upstream project, doc page or issue, by name.
       */
      where?: string;
    }[]
  ];
}
/**
 * This interface was referenced by `CatalogEntry`'s JSON-Schema
 * via the `definition` "signal".
 */
export interface Signal {
  name: string;
  /**
   * Python regex, kept within POSIX ERE (no look-around, no back-references, no \d inside brackets) apart from named groups (?P<name>...), so `grep -E` can run it once the group names are stripped. Case-sensitive unless `ignore_case`. Named groups the engine understands: rank, local_rank, gpu, host, pid, exitcode, signal, step, seq, value, ranks (a comma/space separated list).
   */
  pattern: string;
  ignore_case?: boolean;
  /**
   * initiating: this line can start a failure; collateral: a downstream report (watchdog timeouts, teardown); context: supporting detail.
   */
  role: "initiating" | "collateral" | "context";
  /**
   * How specific the line is to this entry (drives confidence and the choice between entries).
   */
  weight?: number;
  /**
   * The signal counts only once it matched at least this many lines: for lines benign once but a failure when they persist (one step's NaN grad norm during fp16 loss-scale calibration). Unlike the min_count condition, the entry's other signals still fire without it.
   */
  min_count?: number;
  /**
   * Entries whose firing makes this line fallout, so it stops counting: a SIGABRT after NCCL watchdog timeouts is the watchdog taking the process down (nccl-timeout), not a crash of its own.
   */
  not_with?: string[];
  /**
   * Fallout when it comes after a launcher's report of a task's own non-zero exit in the same file: the launcher ending the step, e.g. srun --kill-on-bad-exit (Slurm's bare step cancellation, srun's `task N: Killed` for the other tasks).
   */
  after_bad_exit?: boolean;
  /**
   * Signals of the same entry that announce an error the program caught and went on from: the first line of this signal after one of them, in the same file and rank and within 200 lines, does not count (Python's `Exception ignored in:` before the exception a destructor raised at exit).
   */
  swallowed_after?: string[];
  /**
   * Signals of the same entry whose line anywhere in the log shows the program handled this one: then this signal does not count (clip_grad_norm_'s non-finite-norm warning beside the scheduler warning that the AMP scaler skipped that step).
   */
  benign_with?: string[];
  /**
   * A series value (a loss, a grad norm) that a later finite value of the same key clears: when every file's last hit is followed by a line holding that key with a finite value, the signal does not count (a step skipped by the fp16 loss scaler, an average over a window that held one overflow). The key is the hit's text before its value; searched on raw bytes, a block at a time, only after a hit.
   */
  recovers?: boolean;
  /**
   * A frame line of a Python traceback (`File "...", line N, in NAME`) that places the exception in this entry's code (torch.save, a checkpoint loader, the rendezvous). It never counts by itself: when the next line of the same file and rank that any signal matches, within 200 lines, is an `ends_traceback` line, that line counts as this signal's hit too; any other matched line drops it.
   */
  traceback_frame?: boolean;
  /**
   * A generic exception line (an exception of no known kind) that a waiting `traceback_frame` signal of another entry takes as its own hit.
   */
  ends_traceback?: boolean;
}
/**
 * This interface was referenced by `CatalogEntry`'s JSON-Schema
 * via the `definition` "verification".
 */
export interface Verification {
  /**
   * Shell command template. Placeholders: {rank} {host} {gpu} {log} {pid} {run} {ref} {step}; an unknown value renders as <name> for the user to fill in.
   */
  command: string;
  why: string;
}
