/* Generated from shared-schema/lsp-catalog-entry-params.schema.json by extension/scripts/gen-protocol.mjs. Do not edit. */

/**
 * An unknown or missing id is answered with an InvalidParams (-32602) error.
 */
export interface LspCatalogEntryParams {
  id: string;
}

export const X_METHOD = "denpex/catalogEntry" as const;
