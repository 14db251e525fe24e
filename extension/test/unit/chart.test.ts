import { test } from "node:test";
import assert from "node:assert/strict";
import {
  niceTicks,
  linearScale,
  formatValue,
  renderDriftChart,
  type DriftSeries,
} from "../../src/core/chart";
import { renderDriftHtml, shortPath } from "../../src/core/driftHtml";
import { DriftStore, seriesFromReport } from "../../src/core/driftSeries";
import type { DriftReport } from "../../src/protocol/methods";

test("nice ticks cover the range with 1-2-5 steps and no float noise", () => {
  assert.deepEqual(niceTicks(0, 0.3, 3), [0, 0.1, 0.2, 0.3]);
  assert.deepEqual(niceTicks(0, 97, 5), [0, 20, 40, 60, 80, 100]);
  assert.deepEqual(niceTicks(100, 1000, 5), [0, 200, 400, 600, 800, 1000]);
  assert.deepEqual(niceTicks(100, 1000, 2), [0, 500, 1000]);
  assert.deepEqual(niceTicks(0, 0, 5), [0, 1], "all-zero series still gets an axis");
  const t = niceTicks(5, 5, 5);
  assert.ok(t[0] <= 5 && t[t.length - 1] >= 5 && t.length >= 2);
  assert.deepEqual(niceTicks(NaN, 1), [0]);
});

test("linear scale maps the domain ends to the range ends, flipping for SVG's y axis", () => {
  const y = linearScale([0, 10], [200, 20]);
  assert.equal(y(0), 200);
  assert.equal(y(10), 20);
  assert.equal(y(5), 110);
  assert.equal(linearScale([3, 3], [0, 100])(3), 50, "degenerate domain lands mid-range");
});

test("values are formatted compactly", () => {
  assert.equal(formatValue(0), "0");
  assert.equal(formatValue(0.000123), "1.2e-4");
  assert.equal(formatValue(12.345), "12.3");
  assert.equal(formatValue(250000), "2.5e5");
});

const faulty: DriftSeries = {
  run: "runs/faulty<img>",
  reference: "runs/ref",
  points: [
    { step: 100, l2: 0.01, rel_l2: 1e-5 },
    { step: 200, l2: 0.5, rel_l2: 5e-4 },
    { step: 300, l2: 1.5, rel_l2: 1.5e-3 },
  ],
  onsetStep: 200,
  faultyRank: 2,
  verdict: "gradual_drift",
  flagged: true,
  noise: [
    { step: 100, l2: 0.02, rel_l2: 2e-5 },
    { step: 300, l2: 0.04, rel_l2: 4e-5 },
  ],
};

function coords(svg: string, cls: string): number[][] {
  const m = new RegExp(`<polyline class="${cls}"[^>]*points="([^"]*)"`).exec(svg);
  assert.ok(m, `${cls} polyline present`);
  return m![1].split(" ").map((p) => p.split(",").map(Number));
}

test("the chart places points inside the plot, increasing values drawn higher", () => {
  const svg = renderDriftChart([faulty], { width: 600, height: 240, metric: "l2" });
  const pts = coords(svg, "series");
  assert.equal(pts.length, 3);
  for (const [x, y] of pts) {
    assert.ok(x >= 64 && x <= 600 - 16, `x ${x} inside`);
    assert.ok(y >= 24 && y <= 240 - 36, `y ${y} inside`);
  }
  assert.ok(pts[0][0] < pts[1][0] && pts[1][0] < pts[2][0], "steps left to right");
  assert.ok(
    pts[0][1] > pts[1][1] && pts[1][1] > pts[2][1],
    "larger distance is higher (smaller y)",
  );
});

test("the onset is marked with the faulty rank, the noise band drawn, run names escaped", () => {
  const svg = renderDriftChart([faulty], { width: 600, height: 240, metric: "rel_l2" });
  assert.match(svg, /<line class="onset"/);
  assert.match(svg, /onset step 200, rank 2/);
  assert.match(svg, /<polygon class="noise"/);
  assert.ok(svg.includes("runs/faulty&lt;img&gt;"));
  assert.ok(!svg.includes("<img>"));
  assert.match(svg, /relative L2 per step/);
});

test("an empty or non-finite series renders a placeholder, not NaN coordinates", () => {
  const svg = renderDriftChart(
    [{ ...faulty, points: [{ step: 1, l2: NaN, rel_l2: NaN }], noise: [] }],
    { width: 300, height: 100, metric: "l2" },
  );
  assert.match(svg, /No checkpoints compared yet/);
  assert.doesNotMatch(svg, /NaN/);
});

test("the drift page shows verdicts per run and both charts", () => {
  const html = renderDriftHtml([faulty], "nonce123", "src");
  assert.match(html, /<td class="flagged">gradual_drift<\/td>/);
  assert.equal((html.match(/<svg class="chart"/g) ?? []).length, 2);
  assert.doesNotMatch(html, /style="/, "inline style attributes would be blocked by the CSP");
});

const report = (run: string, steps: number[], extra: Partial<DriftReport> = {}): DriftReport => ({
  schema_version: 3,
  mode: "reference",
  run,
  reference: "/ref",
  noise_reference: null,
  device: "cpu",
  points: steps.map((s) => ({
    step: s,
    l2: s / 100,
    rel_l2: s / 1e5,
    max_abs: 0.1,
    mismatched_elements: 10,
    top_tensors: [],
    warnings: [],
  })),
  verdict: "within_noise",
  flagged: false,
  onset_step: null,
  faulty_rank: null,
  trend: {},
  finding: null,
  notes: [],
  warnings: [],
  ...extra,
});

test("a live update replaces a run's series instead of adding a second line", () => {
  const store = new DriftStore();
  store.update(report("/runA", [100]));
  store.update(report("/runB/", [100]));
  store.update(
    report("/runA", [100, 200], { flagged: true, verdict: "gradual_drift", onset_step: 200 }),
  );
  store.update(report("/runB", [100, 200]));
  assert.equal(store.size, 2, "trailing slashes name the same run");
  const [a, b] = store.all();
  assert.equal(a.run, "/runA");
  assert.equal(a.points.length, 2);
  assert.equal(a.onsetStep, 200);
  assert.equal(b.points.length, 2);
});

test("the noise reference's own report becomes the envelope of runs against the same reference", () => {
  const store = new DriftStore();
  store.update(report("/faulty", [1, 2]));
  store.update(
    report("/healthy2", [1, 2], {
      points: [
        {
          step: 1,
          l2: 0.5,
          rel_l2: 1e-6,
          max_abs: 0.1,
          mismatched_elements: 3,
          top_tensors: [],
          warnings: [],
        },
      ],
    }),
    "/healthy2/",
  );
  assert.equal(store.size, 1, "the noise run is not drawn as a run");
  assert.deepEqual(store.all()[0].noise, [{ step: 1, l2: 0.5, rel_l2: 1e-6 }]);
  store.update(report("/other", [1], { reference: "/elsewhere" }), "/healthy2");
  assert.equal(store.all()[1].noise, undefined, "another reference has no envelope");
});

test("a report's noise_points (one compareCheckpoints request) are the band behind its run", () => {
  const store = new DriftStore();
  const noisePoint = {
    step: 1,
    l2: 0.25,
    rel_l2: 2e-6,
    max_abs: 0.1,
    mismatched_elements: 3,
    top_tensors: [],
    warnings: [],
  };
  store.update(
    report("/faulty", [1, 2], { noise_reference: "/noise", noise_points: [noisePoint] }),
  );
  assert.equal(store.size, 1, "one request, one run drawn");
  assert.deepEqual(store.all()[0].noise, [{ step: 1, l2: 0.25, rel_l2: 2e-6 }]);
});

test("non-finite distances (null in the report) are skipped, not drawn at NaN", () => {
  const s = seriesFromReport(
    report("/r", [1], {
      points: [
        {
          step: 1,
          l2: null,
          rel_l2: null,
          max_abs: null,
          mismatched_elements: 0,
          top_tensors: [],
          warnings: [],
        },
      ],
    }),
  );
  assert.ok(Number.isNaN(s.points[0].l2));
  assert.doesNotMatch(renderDriftChart([s], { width: 200, height: 100, metric: "l2" }), /NaN/);
});

test("run paths are shortened to their last two segments, the full path kept as a tooltip", () => {
  assert.equal(shortPath("/scratch/team/exp42/checkpoints/faulty"), "…/checkpoints/faulty");
  assert.equal(shortPath("runs/a"), "runs/a");
  const html = renderDriftHtml([{ ...faulty, run: "/very/long/path/to/runs/faulty" }], "n", "src");
  assert.match(html, /<td title="\/very\/long\/path\/to\/runs\/faulty">.*…\/runs\/faulty<\/td>/s);
});
