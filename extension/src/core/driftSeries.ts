// Turns drift reports (shared-schema/drift-report.schema.json) into chart series and keeps
// the latest report per run, so live updates replace a run's line instead of adding one.
// The noise envelope is the distance of a second healthy run (denpex.checkpoints.noiseReference)
// from the same reference: a report's noise_points (the server compares the noise run in the same
// request), or the noise run's own report when it is watched, become the band behind the runs.
import type { DriftReport } from "../protocol/methods";
import type { DriftPoint, DriftSeries } from "./chart";

function points(series: DriftReport["points"]): DriftPoint[] {
  // null stands for a non-finite distance (NaN/Inf weights); the chart skips NaN.
  return series.map((p) => ({
    step: p.step,
    l2: p.l2 ?? Number.NaN,
    rel_l2: p.rel_l2 ?? Number.NaN,
  }));
}

export function seriesFromReport(report: DriftReport, noise?: readonly DriftPoint[]): DriftSeries {
  return {
    run: report.run,
    reference: report.reference,
    points: points(report.points),
    onsetStep: report.onset_step,
    faultyRank: report.faulty_rank,
    verdict: report.verdict,
    flagged: report.flagged,
    ...(noise && noise.length > 0 ? { noise } : {}),
  };
}

/** Latest report per (mode, run, reference), in first-seen order, plus noise envelopes per reference. */
export class DriftStore {
  private readonly reports = new Map<string, DriftReport>();
  private readonly envelopes = new Map<string, DriftPoint[]>();

  /**
   * Records a report. A report whose run is the configured noise reference is the envelope for
   * its reference, not a run of its own.
   */
  update(report: DriftReport, noiseReference?: string): void {
    if (noiseReference && report.reference !== null && samePath(report.run, noiseReference)) {
      this.envelopes.set(normalise(report.reference), points(report.points));
      return;
    }
    if (report.reference !== null && report.noise_points?.length)
      this.envelopes.set(normalise(report.reference), points(report.noise_points));
    this.reports.set(
      `${report.mode}\u0000${normalise(report.run)}\u0000${normalise(report.reference ?? "")}`,
      report,
    );
  }

  all(): DriftSeries[] {
    return [...this.reports.values()].map((r) =>
      seriesFromReport(
        r,
        r.reference === null ? undefined : this.envelopes.get(normalise(r.reference)),
      ),
    );
  }

  get size(): number {
    return this.reports.size;
  }
}

function normalise(p: string): string {
  return p.replace(/\/+$/, "");
}

function samePath(a: string, b: string): boolean {
  return normalise(a) === normalise(b);
}
