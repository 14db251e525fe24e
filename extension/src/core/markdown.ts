// "Copy Diagnosis as Markdown": the diagnosis as a ticket-ready block.
import type { DenpexDiagnosis, Finding } from "../protocol/methods";
import { compressRanks, describeInitiator } from "./ranks";
import { redact, type RedactionOptions } from "./redact";

function fence(text: string): string {
  // A fence longer than any backtick run inside, so log text cannot close it.
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = "`".repeat(longest + 1);
  return `${ticks}\n${text}\n${ticks}`;
}

function findingMarkdown(f: Finding, prevention: readonly string[] | undefined): string {
  const lines: string[] = [];
  lines.push(`## ${f.title}`, "");
  lines.push(`- **Catalog entry:** \`${f.id}\` (${f.category}), confidence ${Math.round(f.confidence * 100)}%`);
  lines.push(`- **Initiating:** ${describeInitiator(f.initiating_rank, f.host, f.gpu)}`);
  lines.push(`- **Collateral ranks:** ${f.collateral_ranks.length > 0 ? compressRanks(f.collateral_ranks) : "none"}`);
  if (f.suspect_ranks.length > 0) lines.push(`- **Suspect ranks:** ${compressRanks(f.suspect_ranks)}`);
  lines.push("", "**Root cause:** " + f.root_cause, "", "**Fix:** " + f.fix);
  if (prevention && prevention.length > 0) {
    lines.push("", "**Prevention:**", ...prevention.map((p) => `- ${p}`));
  }
  if (f.evidence.length > 0) {
    lines.push("", "**Evidence:**", "", fence(f.evidence.map((e) => `${e.source}:${e.line} [${e.role}] ${e.text}`).join("\n")));
  }
  if (f.verification.length > 0) {
    lines.push("", "**Verify:**", "", fence(f.verification.join("\n")));
  }
  return lines.join("\n");
}

export interface MarkdownExportOptions {
  readonly redact: boolean;
  readonly redaction?: RedactionOptions;
  readonly prevention?: ReadonlyMap<string, readonly string[]>;
}

export function diagnosisToMarkdown(diagnosis: DenpexDiagnosis, options: MarkdownExportOptions): string {
  const body =
    diagnosis.findings.length === 0
      ? "No known failure found."
      : diagnosis.findings.map((f) => findingMarkdown(f, options.prevention?.get(f.id))).join("\n\n");
  const text = `# Denpex diagnosis\n\n${body}\n`;
  if (!options.redact) return text;
  const hosts = diagnosis.findings.map((f) => f.host).filter((h): h is string => h !== null);
  const redacted = redact(text, { ...options.redaction, hosts: [...hosts, ...(options.redaction?.hosts ?? [])] });
  return `${redacted}\n_Host names, IP addresses, user names and tokens redacted (denpex.privacy.redactExports)._\n`;
}
