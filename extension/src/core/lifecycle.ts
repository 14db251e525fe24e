// Server lifecycle policy, kept apart from VS Code so it can be tested: restarts are
// serialised (one in flight, at most one queued: ten setting changes in a row cause two
// restarts, not ten), and crashes back off exponentially with a single user notification.

/** Runs `task` serially: while one run is in flight, further requests collapse into one queued run. */
export class SerialRunner {
  private inFlight: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  constructor(private readonly task: () => Promise<void>) {}

  run(): Promise<void> {
    if (this.queued) return this.queued;
    if (this.inFlight) {
      const after = this.inFlight;
      this.queued = after.then(() => {
        this.queued = undefined;
        return this.start();
      });
      return this.queued;
    }
    return this.start();
  }

  private start(): Promise<void> {
    const current = this.task();
    // The chain must not break when one run fails; callers still see the rejection.
    const settled: Promise<void> = current
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => {
        if (this.inFlight === settled) this.inFlight = undefined;
      });
    this.inFlight = settled;
    return current;
  }

  get busy(): boolean {
    return this.inFlight !== undefined;
  }
}

export interface BackoffOptions {
  readonly baseMs: number;
  readonly maxMs: number;
  /** Crashes within this window count towards giving up. */
  readonly windowMs: number;
  readonly maxCrashesInWindow: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = {
  baseMs: 500,
  maxMs: 30_000,
  windowMs: 180_000,
  maxCrashesInWindow: 5,
};

export type CrashDecision =
  | { readonly action: "restart"; readonly delayMs: number; readonly notify: boolean }
  | { readonly action: "give-up"; readonly notify: boolean };

/** Decides what to do after each unexpected server exit. */
export class CrashPolicy {
  private crashes: number[] = [];
  private notified = false;

  constructor(private readonly opts: BackoffOptions = DEFAULT_BACKOFF) {}

  onCrash(now: number): CrashDecision {
    this.crashes = this.crashes.filter((t) => now - t < this.opts.windowMs);
    this.crashes.push(now);
    // One notification per burst of crashes: the first one tells the user, later ones only log.
    const notify = !this.notified;
    this.notified = true;
    if (this.crashes.length > this.opts.maxCrashesInWindow) return { action: "give-up", notify };
    const delayMs = Math.min(this.opts.maxMs, this.opts.baseMs * 2 ** (this.crashes.length - 1));
    return { action: "restart", delayMs, notify };
  }

  /** A healthy start or a manual restart resets the history. */
  reset(): void {
    this.crashes = [];
    this.notified = false;
  }
}

/** Settings whose change needs a new server process; the rest reach it via didChangeConfiguration. */
// The globs also shape the document selector, fixed when the client starts.
export const RESTART_SETTINGS: readonly string[] = [
  "denpex.python.interpreter",
  "denpex.logs.globs",
];

export function needsRestart(affects: (section: string) => boolean): boolean {
  return RESTART_SETTINGS.some((s) => affects(s));
}
