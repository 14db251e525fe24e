// Terminal output arrives raw from execution.read(): colours, cursor moves, OSC titles and
// VS Code's own shell-integration marks (OSC 633). The server strips them for terminal
// watching; the client strips them for "Diagnose Terminal Output", which sends plain text.

// CSI (ESC [ ... final), OSC (ESC ] ... BEL or ESC \), other two-byte escapes, and the
// 8-bit C1 forms of CSI/OSC. Control characters are the point of these patterns.
// eslint-disable-next-line no-control-regex
const ESCAPES = /\u001b\[[0-?]*[ -/]*[@-~]|\u009b[0-?]*[ -/]*[@-~]|(?:\u001b\]|\u009d)[^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[PX^_][^\u001b]*\u001b\\|\u001b[@-Z\\-_]/g;

export function stripAnsi(text: string): string {
  return text.replace(ESCAPES, "");
}

/** Strips escapes and resolves carriage returns: progress bars overwrite a line with `\r`. */
export function cleanTerminalText(text: string): string {
  const plain = stripAnsi(text).replace(/\r\n/g, "\n");
  return plain
    .split("\n")
    .map((line) => {
      const parts = line.split("\r");
      return parts.length === 1 ? line : parts.filter((p) => p !== "").pop() ?? "";
    })
    .join("\n")
    // Remaining control characters (bell, backspace...) carry no meaning for diagnosis.
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "");
}

/**
 * Keeps the last `maxChars` of a command's output without holding the whole stream: a
 * training job can print gigabytes, and tracebacks are at the end.
 */
export class TailBuffer {
  private chunks: string[] = [];
  private size = 0;
  private dropped = false;

  constructor(private readonly maxChars: number) {
    if (!(maxChars > 0)) throw new RangeError("maxChars must be positive");
  }

  push(chunk: string): void {
    this.chunks.push(chunk);
    this.size += chunk.length;
    while (this.size - this.chunks[0].length >= this.maxChars) {
      this.size -= this.chunks.shift()!.length;
      this.dropped = true;
    }
  }

  /** The retained text, cut to at most maxChars at a line start when something was dropped. */
  text(): string {
    let joined = this.chunks.join("");
    if (joined.length > this.maxChars) {
      joined = joined.slice(joined.length - this.maxChars);
      this.dropped = true;
    }
    if (this.dropped) {
      const nl = joined.indexOf("\n");
      if (nl >= 0 && nl < joined.length - 1) joined = joined.slice(nl + 1);
    }
    return joined;
  }

  get truncated(): boolean {
    return this.dropped || this.size > this.maxChars;
  }
}

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
