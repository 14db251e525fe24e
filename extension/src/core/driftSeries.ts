// Turns drift reports (shared-schema/drift-report.schema.json) into chart series and keeps
// the latest report per run, so live updates replace a run's line instead of adding one.
import type { DriftReport } from "../protocol/methods";
import type { DriftSeries } from "./chart";

type NoisePoint = { step: number; l2: number; rel_l2: number };

function num(v: unknown): number | undefined {
  return typeof v === "number" && Number.isFinite(v) ? v : undefined;
}

/** The noise envelope, from whichever shape the report carries it in (absent when unknown). */
function noiseOf(report: DriftReport): NoisePoint[] | undefined {
  const raw = (report as Record<string, unknown>).noise_envelope ?? (report as Record<string, unknown>).noise;
  if (Array.isArray(raw)) {
    const pts = raw
      .map((p) => p as Record<string, unknown>)
      .map((p) => ({ step: num(p.step), l2: num(p.l2), rel_l2: num(p.rel_l2) }))
      .filter((p): p is NoisePoint => p.step !== undefined && p.l2 !== undefined && p.rel_l2 !== undefined);
    return pts.length > 0 ? pts : undefined;
  }
  // Per-point form: each point carries the noise distance measured at that step.
  const perPoint = report.points
    .map((p) => ({ step: p.step, l2: num(p.noise_l2), rel_l2: num(p.noise_rel_l2) }))
    .filter((p): p is NoisePoint => p.l2 !== undefined && p.rel_l2 !== undefined);
  return perPoint.length > 0 ? perPoint : undefined;
}

export function seriesFromReport(report: DriftReport): DriftSeries {
  const noise = noiseOf(report);
  return {
    run: report.run,
    reference: report.reference,
    points: report.points.map((p) => ({ step: p.step, l2: p.l2, rel_l2: p.rel_l2 })),
    onsetStep: report.onset_step,
    faultyRank: report.faulty_rank,
    verdict: report.verdict,
    flagged: report.flagged,
    ...(noise ? { noise } : {}),
  };
}

/** Latest series per (run, reference) pair, in first-seen order. */
export class DriftStore {
  private readonly byKey = new Map<string, DriftSeries>();

  update(report: DriftReport): DriftSeries {
    const series = seriesFromReport(report);
    this.byKey.set(`${report.mode}\u0000${report.run}\u0000${report.reference ?? ""}`, series);
    return series;
  }

  all(): DriftSeries[] {
    return [...this.byKey.values()];
  }

  get size(): number {
    return this.byKey.size;
  }
}
