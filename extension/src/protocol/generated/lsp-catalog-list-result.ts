/* Generated from shared-schema/lsp-catalog-list-result.schema.json by extension/scripts/gen-protocol.mjs. Do not edit. */

/**
 * Every catalog entry's summary, grouped by category and sorted by id within (the order of `denpex catalog`). The whole entry is one denpex/catalogEntry request away.
 */
export interface LspCatalogListResult {
  entries: Summary[];
}
/**
 * This interface was referenced by `LspCatalogListResult`'s JSON-Schema
 * via the `definition` "summary".
 */
export interface Summary {
  id: string;
  title: string;
  category: string;
  tags: string[];
}

export const X_METHOD = "denpex/catalogList" as const;
