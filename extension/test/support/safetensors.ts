// Writes real safetensors files (the format is a length-prefixed JSON header followed by
// raw little-endian tensor bytes), so drift tests need no Python to produce checkpoints.
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import * as path from "node:path";

export interface Tensor {
  readonly shape: readonly number[];
  readonly data: Float32Array;
}

export function writeSafetensors(file: string, tensors: Record<string, Tensor>): void {
  const header: Record<string, unknown> = { __metadata__: { format: "pt" } };
  let offset = 0;
  const names = Object.keys(tensors).sort();
  for (const name of names) {
    const bytes = tensors[name].data.byteLength;
    header[name] = {
      dtype: "F32",
      shape: tensors[name].shape,
      data_offsets: [offset, offset + bytes],
    };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  json += " ".repeat((8 - (json.length % 8)) % 8);
  const head = Buffer.alloc(8);
  head.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  const body = Buffer.concat(
    names.map((n) =>
      Buffer.from(tensors[n].data.buffer, tensors[n].data.byteOffset, tensors[n].data.byteLength),
    ),
  );
  mkdirSync(path.dirname(file), { recursive: true });
  // Written under a temporary name and renamed, as training frameworks do, so a watcher
  // never sees a half-written checkpoint.
  writeFileSync(`${file}.tmp`, Buffer.concat([head, Buffer.from(json), body]));
  renameSync(`${file}.tmp`, file);
}

/** A deterministic pseudo-random generator (mulberry32) so runs are reproducible. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
