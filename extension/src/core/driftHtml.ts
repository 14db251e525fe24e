// The drift view page: one chart per metric and a table of verdicts. Re-rendered whole on
// every update; reports are small (one point per checkpoint).
import { renderDriftChart, seriesColor, type DriftSeries } from "./chart";
import { escapeHtml, webviewDocument } from "./escape";

const CSS = `
body { font-family: var(--vscode-font-family); color: var(--vscode-foreground); padding: 0 1em 2em; }
h1 { font-size: 1.3em; }
svg.chart { display: block; margin: 1em 0; max-width: 100%; height: auto; }
svg .grid { stroke: var(--vscode-editorWidget-border, #8884); stroke-width: 1; }
svg text { fill: var(--vscode-foreground); font-size: 12px; }
svg .title { font-weight: 600; font-size: 13px; }
svg .tick, svg .axis { fill: var(--vscode-descriptionForeground); }
table { border-collapse: collapse; }
th, td { text-align: left; padding: 2px 10px 2px 0; }
.swatch { display: inline-block; width: 10px; height: 10px; margin-right: 6px; }
.flagged { color: var(--vscode-editorError-foreground); font-weight: 600; }
.muted { color: var(--vscode-descriptionForeground); }
`;

/** The last two path segments: runs usually differ there, and full paths crowd the table. */
export function shortPath(p: string): string {
  const parts = p.split(/[\\/]+/).filter((x) => x !== "");
  return parts.length <= 2 ? p : `…/${parts.slice(-2).join("/")}`;
}

function verdictRow(s: DriftSeries, i: number): string {
  return `<tr><td title="${escapeHtml(s.run)}"><svg class="swatch" width="10" height="10" aria-hidden="true"><rect width="10" height="10" fill="${seriesColor(i)}"/></svg>${escapeHtml(shortPath(s.run))}</td>
<td title="${escapeHtml(s.reference ?? "")}">${escapeHtml(s.reference === null ? "replicas" : shortPath(s.reference))}</td>
<td class="${s.flagged ? "flagged" : ""}">${escapeHtml(s.verdict)}</td>
<td>${escapeHtml(s.onsetStep ?? "—")}</td>
<td>${escapeHtml(s.faultyRank ?? "—")}</td>
<td>${escapeHtml(s.points.length)}</td></tr>`;
}

export function renderDriftBody(series: readonly DriftSeries[]): string {
  if (series.length === 0) {
    return `<h1>Denpex drift</h1><p class="muted">No checkpoint comparisons yet. Use "Denpex: Watch Checkpoint Directory…" or "Denpex: Compare Checkpoints…".</p>`;
  }
  // Swatches are SVG fills (presentation attributes): the CSP blocks inline style="" attributes.
  const table = `<table><thead><tr><th>Run</th><th>Reference</th><th>Verdict</th><th>Onset step</th><th>Faulty rank</th><th>Checkpoints</th></tr></thead><tbody>${series.map(verdictRow).join("")}</tbody></table>`;
  return `<h1>Denpex drift</h1>
${table}
${renderDriftChart(series, { width: 560, height: 240, metric: "l2" })}
${renderDriftChart(series, { width: 560, height: 240, metric: "rel_l2" })}
<p class="muted">Computed on this machine; shaded bands are the benign-noise envelope where a noise reference is set; dashed lines mark the onset step.</p>`;
}

export function renderDriftHtml(
  series: readonly DriftSeries[],
  nonce: string,
  cspSource: string,
): string {
  return webviewDocument({
    title: "Denpex drift",
    nonce,
    cspSource,
    css: CSS,
    body: renderDriftBody(series),
    script: "",
  });
}
