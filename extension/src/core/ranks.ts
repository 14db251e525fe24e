// Rank lists read better compressed: "0-3, 5, 8-15" instead of sixteen numbers.

export function compressRanks(ranks: readonly number[]): string {
  const sorted = [...new Set(ranks)].sort((a, b) => a - b);
  const parts: string[] = [];
  let i = 0;
  while (i < sorted.length) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    parts.push(j === i ? `${sorted[i]}` : j === i + 1 ? `${sorted[i]}, ${sorted[j]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(", ");
}

/** "rank 3 on node-7, GPU 3" from whichever of the three are known. */
export function describeInitiator(rank: number | null, host: string | null, gpu: number | null): string {
  if (rank === null && host === null && gpu === null) return "not identified";
  const bits: string[] = [];
  bits.push(rank === null ? "unknown rank" : `rank ${rank}`);
  if (host !== null) bits.push(`on ${host}`);
  if (gpu !== null) bits.push(`GPU ${gpu}`);
  return bits.length === 3 ? `${bits[0]} ${bits[1]}, ${bits[2]}` : bits.join(host !== null ? " " : ", ");
}
