/* Generated from shared-schema/lsp-catalog-entry-result.schema.json by extension/scripts/gen-protocol.mjs. Do not edit. */

export interface LspCatalogEntryResult {
  id: string;
  title: string;
  category: string;
  /**
   * The whole entry as a Markdown page (as `denpex catalog ID`).
   */
  markdown: string;
}

export const X_METHOD = "denpex/catalogEntry" as const;
