// Drift chart geometry: axis ticks, scales and the SVG markup for one metric (l2 or
// rel_l2) across runs. Pure so scaling edge cases (one point, all zeros, NaN) are tested.
import { escapeHtml } from "./escape";

export interface DriftPoint {
  readonly step: number;
  readonly l2: number;
  readonly rel_l2: number;
}

export interface DriftSeries {
  /** Run label (its directory). */
  readonly run: string;
  readonly reference: string | null;
  readonly points: readonly DriftPoint[];
  readonly onsetStep: number | null;
  readonly faultyRank: number | null;
  readonly verdict: string;
  readonly flagged: boolean;
  /** Upper edge of the benign noise per step, when a noise reference is known. */
  readonly noise?: readonly {
    readonly step: number;
    readonly l2: number;
    readonly rel_l2: number;
  }[];
}

export type Metric = "l2" | "rel_l2";

export interface Scale {
  (value: number): number;
  readonly domain: readonly [number, number];
}

export function linearScale(
  domain: readonly [number, number],
  range: readonly [number, number],
): Scale {
  const [d0, d1] = domain;
  const [r0, r1] = range;
  const span = d1 - d0;
  const f = ((v: number) =>
    span === 0 ? (r0 + r1) / 2 : r0 + ((v - d0) / span) * (r1 - r0)) as Scale;
  Object.defineProperty(f, "domain", { value: [d0, d1] });
  return f;
}

/** Round tick values covering [min, max] ("nice" steps of 1, 2, 5 × 10^k). */
export function niceTicks(min: number, max: number, count = 5): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [0];
  if (max < min) [min, max] = [max, min];
  if (max === min) {
    if (max === 0) return [0, 1];
    const pad = Math.abs(max) * 0.5;
    return niceTicks(min - pad, max + pad, count);
  }
  const raw = (max - min) / Math.max(1, count);
  const mag = 10 ** Math.floor(Math.log10(raw));
  const norm = raw / mag;
  const step = (norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 5 ? 5 : 10) * mag;
  const start = Math.floor(min / step) * step;
  const end = Math.ceil(max / step) * step;
  const ticks: number[] = [];
  // Round to the step's precision so 0.1 + 0.2 style error does not leak into labels.
  const decimals = Math.max(0, -Math.floor(Math.log10(step)) + 1);
  for (let v = start; v <= end + step / 2; v += step) ticks.push(Number(v.toFixed(decimals)));
  return ticks;
}

export function formatValue(v: number): string {
  if (v === 0) return "0";
  const a = Math.abs(v);
  if (a >= 1e4 || a < 1e-3) return v.toExponential(1).replace("e+", "e");
  return Number(v.toPrecision(3)).toString();
}

const COLORS = ["#3794ff", "#f14c4c", "#89d185", "#cca700", "#b180d7", "#4ec9b0"];

export interface ChartOptions {
  readonly width: number;
  readonly height: number;
  readonly metric: Metric;
}

const MARGIN = { top: 24, right: 16, bottom: 36, left: 64 };

/** SVG for one metric; every string from a report is escaped. */
export function renderDriftChart(series: readonly DriftSeries[], opts: ChartOptions): string {
  const finite = (v: number) => Number.isFinite(v);
  const pts = series.flatMap((s) =>
    s.points.filter((p) => finite(p[opts.metric]) && finite(p.step)),
  );
  const noise = series.flatMap((s) =>
    (s.noise ?? []).filter((p) => finite(p[opts.metric]) && finite(p.step)),
  );
  const label = opts.metric === "l2" ? "L2 distance" : "relative L2";
  if (pts.length === 0) {
    return `<svg class="chart" role="img" aria-label="${escapeHtml(label)}: no data" width="${opts.width}" height="${opts.height}" viewBox="0 0 ${opts.width} ${opts.height}"><text x="${opts.width / 2}" y="${opts.height / 2}" text-anchor="middle" class="empty">No checkpoints compared yet</text></svg>`;
  }
  const steps = [...pts, ...noise].map((p) => p.step);
  const values = [0, ...pts.map((p) => p[opts.metric]), ...noise.map((p) => p[opts.metric])];
  const xTicks = niceTicks(Math.min(...steps), Math.max(...steps), 6);
  const yTicks = niceTicks(Math.min(...values), Math.max(...values), 5);
  const x = linearScale(
    [xTicks[0], xTicks[xTicks.length - 1]],
    [MARGIN.left, opts.width - MARGIN.right],
  );
  const y = linearScale(
    [yTicks[0], yTicks[yTicks.length - 1]],
    [opts.height - MARGIN.bottom, MARGIN.top],
  );
  const f = (n: number) => n.toFixed(1);

  const parts: string[] = [];
  parts.push(
    `<svg class="chart" role="img" aria-label="${escapeHtml(label)} per step" width="${opts.width}" height="${opts.height}" viewBox="0 0 ${opts.width} ${opts.height}" xmlns="http://www.w3.org/2000/svg">`,
  );
  parts.push(`<text class="title" x="${MARGIN.left}" y="14">${escapeHtml(label)} per step</text>`);
  for (const t of yTicks) {
    parts.push(
      `<line class="grid" x1="${MARGIN.left}" x2="${opts.width - MARGIN.right}" y1="${f(y(t))}" y2="${f(y(t))}"/><text class="tick" x="${MARGIN.left - 6}" y="${f(y(t) + 4)}" text-anchor="end">${escapeHtml(formatValue(t))}</text>`,
    );
  }
  for (const t of xTicks) {
    parts.push(
      `<line class="grid" x1="${f(x(t))}" x2="${f(x(t))}" y1="${opts.height - MARGIN.bottom}" y2="${opts.height - MARGIN.bottom + 4}"/><text class="tick" x="${f(x(t))}" y="${opts.height - MARGIN.bottom + 16}" text-anchor="middle">${escapeHtml(formatValue(t))}</text>`,
    );
  }
  parts.push(
    `<text class="axis" x="${(MARGIN.left + opts.width - MARGIN.right) / 2}" y="${opts.height - 4}" text-anchor="middle">step</text>`,
  );

  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const envelope = (s.noise ?? [])
      .filter((p) => finite(p[opts.metric]))
      .sort((a, b) => a.step - b.step);
    if (envelope.length > 0) {
      // Shaded band from zero up to the noise edge: inside it, distance is benign.
      const top = envelope.map((p) => `${f(x(p.step))},${f(y(p[opts.metric]))}`);
      const base = [...envelope].reverse().map((p) => `${f(x(p.step))},${f(y(0))}`);
      parts.push(
        `<polygon class="noise" points="${[...top, ...base].join(" ")}" fill="${color}" fill-opacity="0.12"><title>noise envelope (${escapeHtml(s.run)})</title></polygon>`,
      );
    }
    const line = s.points
      .filter((p) => finite(p[opts.metric]))
      .slice()
      .sort((a, b) => a.step - b.step);
    if (line.length > 0) {
      parts.push(
        `<polyline class="series" fill="none" stroke="${color}" stroke-width="2" points="${line.map((p) => `${f(x(p.step))},${f(y(p[opts.metric]))}`).join(" ")}"/>`,
      );
      for (const p of line) {
        parts.push(
          `<circle cx="${f(x(p.step))}" cy="${f(y(p[opts.metric]))}" r="3" fill="${color}"><title>${escapeHtml(s.run)} step ${escapeHtml(p.step)}: ${escapeHtml(formatValue(p[opts.metric]))}</title></circle>`,
        );
      }
    }
    if (s.onsetStep !== null && finite(s.onsetStep)) {
      const ox = f(x(s.onsetStep));
      const who = s.faultyRank !== null ? `, rank ${s.faultyRank}` : "";
      parts.push(
        `<line class="onset" x1="${ox}" x2="${ox}" y1="${MARGIN.top}" y2="${opts.height - MARGIN.bottom}" stroke="${color}" stroke-dasharray="4 3"/><text class="onset-label" x="${ox}" y="${MARGIN.top + 12 + i * 12}" dx="4">onset step ${escapeHtml(s.onsetStep)}${escapeHtml(who)}</text>`,
      );
    }
  });
  parts.push(`</svg>`);
  return parts.join("\n");
}

export function seriesColor(index: number): string {
  return COLORS[index % COLORS.length];
}
