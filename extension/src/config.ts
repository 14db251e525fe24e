// The `denpex.*` settings, read in one place and typed by shared-schema/lsp-settings.schema.json
// (the generated LspSettings). package.json's contributes.configuration declares the same keys
// with the same defaults (tests/lsp/test_settings_manifest.py ties the two), so every key has a
// value here: VS Code fills in the contributed default of a key the user did not set.
import * as vscode from "vscode";
import type { LspSettings } from "./protocol/generated/lsp-settings";

type Complete<T> = {
  [K in keyof T]-?: NonNullable<T[K]> extends unknown[] | string | number | boolean
    ? NonNullable<T[K]>
    : Complete<NonNullable<T[K]>>;
};

export type Config = Complete<LspSettings>;

export function readConfig(): Config {
  // A plain copy: the configuration object carries methods that do not serialise.
  return JSON.parse(JSON.stringify(vscode.workspace.getConfiguration("denpex"))) as Config;
}

/** Where a command that changes a setting writes it: the workspace when one is open. */
export async function updateConfig(
  key: "checkpoints.watch" | "checkpoints.reference",
  value: unknown,
): Promise<void> {
  const target = vscode.workspace.workspaceFolders
    ? vscode.ConfigurationTarget.Workspace
    : vscode.ConfigurationTarget.Global;
  await vscode.workspace.getConfiguration("denpex").update(key, value, target);
}
