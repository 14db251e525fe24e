// Lint config for the extension sources and their tests (flat config, typescript-eslint).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "out/**",
      ".cache/**",
      "node_modules/**",
      "extension/src/protocol/generated/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": [
        "error",
        { argsIgnorePattern: "^_", varsIgnorePattern: "^_" },
      ],
    },
  },
  {
    // The extension logs to its output channel; console output would vanish in the host.
    files: ["extension/src/**/*.ts"],
    rules: {
      eqeqeq: ["error", "always", { null: "ignore" }],
      "no-console": "error",
    },
  },
  {
    // Pure modules must stay testable under plain node: no `vscode` import there.
    files: ["extension/src/core/**/*.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          paths: [
            { name: "vscode", message: "core/ is vscode-free; put editor glue outside core/." },
          ],
        },
      ],
    },
  },
  {
    files: ["extension/scripts/**/*.mjs", "extension/test/**/*.mjs"],
    languageOptions: {
      globals: {
        process: "readonly",
        console: "readonly",
        URL: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        Buffer: "readonly",
      },
    },
  },
);
