// Redaction for exported diagnoses: a markdown copy gets pasted into tickets and chats, and
// training logs are full of cluster host names, IPs, home directories and leaked tokens.
// Host names are replaced consistently (host-1, host-2, ...) so the reader can still see
// which ranks shared a machine.

export interface RedactionOptions {
  /** Host names known to be in the text (the diagnosis's hosts, this machine's name). */
  readonly hosts?: readonly string[];
  /** User names known to be sensitive (this machine's user). */
  readonly users?: readonly string[];
}

const TOKEN_PATTERNS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bBearer\s+[A-Za-z0-9._~+/=-]{8,}/g, "Bearer <token>"],
  [/\bhf_[A-Za-z0-9]{16,}\b/g, "<hf-token>"],
  [/\bgh[pousr]_[A-Za-z0-9]{20,}\b/g, "<github-token>"],
  [/\bgithub_pat_[A-Za-z0-9_]{20,}\b/g, "<github-token>"],
  [/\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g, "<aws-key-id>"],
  [/\bsk-(?:proj-)?[A-Za-z0-9_-]{20,}\b/g, "<api-key>"],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}\b/g, "<slack-token>"],
  // KEY=value assignments (WANDB_API_KEY=..., password: ...), unless already replaced above.
  [/\b((?:[A-Z0-9]+_)*(?:api[_-]?key|token|secret|password|passwd)\s*[=:]\s*)("?)(?!<)[^\s"']{6,}\2/gi, "$1<redacted>"],
];

const OCTET = "(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)";
const IPV4 = new RegExp(`(?<![\\w.])${OCTET}(?:\\.${OCTET}){3}(?![\\w.]*\\d)`, "g");
// Full eight-group form, or a compressed form with "::" (timestamps like 12:34:56 never match).
const IPV6 = /(?<![\w:])(?:(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){1,6}:(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){0,5})?|::(?:[0-9A-Fa-f]{1,4}:){0,5}[0-9A-Fa-f]{1,4})(?![\w:])/g;
const EMAIL = /\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b/g;
const HOME_PATH = /(\/(?:home|Users|scratch|work|gpfs\/home)\/)([^/\s:'"]+)/g;
const WINDOWS_HOME = /([A-Za-z]:\\Users\\)([^\\\s]+)/g;
// Host names as logs print them: NCCL's "host:pid:tid [dev]" prefix, torchelastic's
// "host : name", and "hostname=name".
const HOST_IN_LOG = [
  /^(?:\[[^\]]*\]\s*)*([A-Za-z][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)*):\d+:\d+ \[\d+\]/gm,
  /\bhost(?:name)?\s*[:=]\s*([A-Za-z][A-Za-z0-9-]*(?:\.[A-Za-z0-9-]+)*)/gi,
];

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Host names found in log text by their usual positions. */
export function hostsInText(text: string): string[] {
  const found = new Set<string>();
  for (const re of HOST_IN_LOG) {
    for (const m of text.matchAll(re)) found.add(m[1]);
  }
  return [...found];
}

export function redact(text: string, options: RedactionOptions = {}): string {
  let out = text;
  for (const [re, replacement] of TOKEN_PATTERNS) out = out.replace(re, replacement);
  out = out.replace(EMAIL, "<email>");
  out = out.replace(HOME_PATH, "$1<user>").replace(WINDOWS_HOME, "$1<user>");
  for (const user of options.users ?? []) {
    if (user.length >= 3) out = out.replace(new RegExp(`(?<![\\w-])${escapeRegExp(user)}(?![\\w-])`, "g"), "<user>");
  }
  out = out.replace(IPV4, "<ip>").replace(IPV6, "<ip>");
  // Longest first so "node-1.cluster" is replaced before its prefix "node-1".
  const hosts = [...new Set([...(options.hosts ?? []), ...hostsInText(out)])]
    .filter((h) => h.length >= 2 && !/^<.*>$/.test(h) && h !== "localhost")
    .sort((a, b) => b.length - a.length);
  const labels = new Map<string, string>();
  let count = 0;
  for (const host of hosts) {
    const short = host.split(".")[0];
    // FQDN and short name of one machine get one label.
    const label = labels.get(short) ?? `host-${++count}`;
    labels.set(short, label);
    labels.set(host, label);
  }
  for (const host of [...labels.keys()].sort((a, b) => b.length - a.length)) {
    out = out.replace(new RegExp(`(?<![\\w.-])${escapeRegExp(host)}(?![\\w-]|\\.[A-Za-z0-9])`, "g"), labels.get(host)!);
  }
  return out;
}
