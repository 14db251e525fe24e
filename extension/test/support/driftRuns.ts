// Checkpoint runs for drift tests: a reference, a run with a permanent compute fault from
// FAULT_FROM on, and a healthy rerun, as real safetensors files.
import * as path from "node:path";
import { rng, writeSafetensors, type Tensor } from "./safetensors";

const ROWS = 64;
const COLS = 64;
export const FAULT_FROM = 500;
export const STEPS = [100, 200, 300, 400, 500, 600, 700, 800, 900, 1000];

/**
 * Weights of a tiny model at `step`. Every run follows the same trajectory plus its own
 * round-off noise in every element (growing like a random walk, as healthy reruns do); the
 * faulty run also has one output row of one matmul drifting away from FAULT_FROM on, a
 * permanent fault that compounds.
 */
export function weights(step: number, faulty: boolean, seed: number): Record<string, Tensor> {
  const base = rng(1234);
  const noise = rng(seed * 100_000 + step);
  const roundoff = () => (noise() - 0.5) * 2e-6 * Math.sqrt(step / 100);
  const tensor = (rows: number, scale: number): Float32Array => {
    const t = new Float32Array(rows * COLS);
    for (let i = 0; i < t.length; i++) t[i] = (base() - 0.5) * scale + step * 1e-5 + roundoff();
    return t;
  };
  const w = tensor(ROWS, 0.2);
  if (faulty && step >= FAULT_FROM) {
    const k = (step - FAULT_FROM) / 100 + 1;
    for (let c = 0; c < COLS; c++) w[7 * COLS + c] += 1e-3 * k * k;
  }
  return {
    "layers.0.mlp.weight": { shape: [ROWS, COLS], data: w },
    "layers.0.attn.weight": { shape: [ROWS, COLS], data: tensor(ROWS, 0.2) },
    "embed.weight": { shape: [32, COLS], data: tensor(32, 0.1) },
  };
}

export function checkpointPath(root: string, step: number): string {
  return path.join(root, `step_${step}`, "model.safetensors");
}

export type RunKind = "reference" | "faulty" | "healthy";

const SEEDS: Record<RunKind, number> = { reference: 1, faulty: 2, healthy: 3 };

export function writeCheckpoint(root: string, kind: RunKind, step: number): void {
  writeSafetensors(checkpointPath(root, step), weights(step, kind === "faulty", SEEDS[kind]));
}

export function writeRun(root: string, kind: RunKind, steps: readonly number[] = STEPS): void {
  for (const step of steps) writeCheckpoint(root, kind, step);
}
