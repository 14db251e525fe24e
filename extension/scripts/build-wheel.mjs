// Builds the denpex wheel into dist/wheels/ so the .vsix carries the Python package and
// "Install Denpex" works without the registry (beyond denpex's own dependencies). Uses
// $DENPEX_PYTHON (what the Makefile passes), else the project's .venv, else python3 — the
// same order as the protocol tests — without build isolation so no build requirements
// are downloaded (setuptools and wheel must be in that interpreter).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const out = path.join(root, "dist/wheels");
const venv = path.join(root, ".venv/bin/python");
const python = process.env.DENPEX_PYTHON || (existsSync(venv) ? venv : "python3");
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
execFileSync(
  python,
  [
    "-m",
    "pip",
    "wheel",
    "--quiet",
    "--no-deps",
    "--no-build-isolation",
    "--disable-pip-version-check",
    "--wheel-dir",
    out,
    root,
  ],
  {
    cwd: root,
    stdio: "inherit",
  },
);
const wheels = readdirSync(out).filter((f) => f.endsWith(".whl"));
if (wheels.length !== 1) {
  console.error(`expected one denpex wheel in dist/wheels, found: ${wheels.join(", ") || "none"}`);
  process.exit(1);
}
console.log(`built dist/wheels/${wheels[0]}`);
