/* Generated from shared-schema/lsp-diagnosis-markdown-result.schema.json by extension/scripts/gen-protocol.mjs. Do not edit. */

export interface LspDiagnosisMarkdownResult {
  /**
   * The diagnosis as one Markdown block; redacted ones end with a line saying so.
   */
  markdown: string;
}

export const X_METHOD = "denpex/diagnosisMarkdown" as const;
