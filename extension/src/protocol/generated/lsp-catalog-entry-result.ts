/* Generated from shared-schema/lsp-catalog-entry-result.schema.json by extension/scripts/gen-protocol.mjs. Do not edit. */

/**
 * The entry's fields the editor shows as they are (no parsing of the page), and the whole page as Markdown.
 */
export interface LspCatalogEntryResult {
  id: string;
  title: string;
  category: string;
  /**
   * One paragraph of Markdown (catalog text).
   */
  quick_answer: string;
  /**
   * Ordered fix steps (Markdown).
   */
  fix: string[];
  /**
   * Prevention steps (Markdown).
   */
  prevention: string[];
  /**
   * Verification command templates with their {placeholders}; a finding carries them filled in.
   */
  verification: {
    command: string;
    why: string;
  }[];
  /**
   * The whole entry as a Markdown page (as `denpex catalog ID`).
   */
  markdown: string;
}

export const X_METHOD = "denpex/catalogEntry" as const;
