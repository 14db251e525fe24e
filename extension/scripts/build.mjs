// Bundles the extension (dist/extension.js) and, with --tests, each test file to out/test/
// so node --test runs plain JavaScript. `vscode` stays external: VS Code provides it.
import * as esbuild from "esbuild";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const tests = process.argv.includes("--tests");

async function testEntries(dir) {
  const abs = path.join(root, dir);
  const files = await readdir(abs).catch(() => []);
  return files.filter((f) => f.endsWith(".test.ts")).map((f) => path.join(abs, f));
}

if (tests) {
  for (const kind of ["unit", "protocol", "e2e"]) {
    const entryPoints = await testEntries(`extension/test/${kind}`);
    if (entryPoints.length === 0) continue;
    await esbuild.build({
      entryPoints,
      outdir: path.join(root, "out/test", kind),
      bundle: true,
      platform: "node",
      format: "cjs",
      target: "node20",
      sourcemap: "inline",
      // playwright-core loads its own files at run time; it stays a normal require.
      external: ["vscode", "playwright-core"],
      logLevel: "warning",
    });
  }
} else {
  await esbuild.build({
    entryPoints: [path.join(root, "extension/src/extension.ts")],
    outfile: path.join(root, "dist/extension.js"),
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    minify: true,
    sourcemap: false,
    external: ["vscode"],
    logLevel: "warning",
  });
}
