// Terminal output travels to the server in bounded notifications.

/** Splits a chunk so no JSON-RPC notification carries more than `max` characters. */
export function splitForTransport(chunk: string, max: number): string[] {
  if (chunk.length <= max) return [chunk];
  const out: string[] = [];
  let start = 0;
  while (start < chunk.length) {
    let end = Math.min(start + max, chunk.length);
    // Never split a UTF-16 surrogate pair across two messages.
    const code = chunk.charCodeAt(end - 1);
    if (end < chunk.length && code >= 0xd800 && code <= 0xdbff) end -= 1;
    out.push(chunk.slice(start, end));
    start = end;
  }
  return out;
}
