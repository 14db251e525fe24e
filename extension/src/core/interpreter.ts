// Which Python runs `denpex serve`: the user's setting, else the Python extension's
// active interpreter, else python3 on PATH. Pure so the order and the error text can be
// unit tested without VS Code; the caller supplies the file-system checks.
import * as path from "node:path";

export type InterpreterSource = "setting" | "python-extension" | "path";

export interface InterpreterCandidate {
  readonly command: string;
  readonly source: InterpreterSource;
}

export interface InterpreterInputs {
  /** Value of denpex.python.interpreter (VS Code already drops it from untrusted workspaces). */
  readonly setting?: string;
  /** Executable reported by the Python extension for the resource, when installed. */
  readonly pythonExtension?: string;
  /** PATH of the extension host. */
  readonly pathEnv?: string;
  readonly homeDir?: string;
  readonly workspaceFolder?: string;
  /** True when the path names an executable file. */
  readonly isExecutable: (file: string) => boolean;
}

export type Resolution =
  | { readonly ok: true; readonly interpreter: InterpreterCandidate }
  | { readonly ok: false; readonly message: string };

/** Expands `~` and `${workspaceFolder}` the way users write them in settings.json. */
export function expandSettingPath(
  value: string,
  homeDir?: string,
  workspaceFolder?: string,
): string {
  let out = value.trim();
  if (workspaceFolder !== undefined) out = out.split("${workspaceFolder}").join(workspaceFolder);
  if (homeDir !== undefined && (out === "~" || out.startsWith("~/")))
    out = path.join(homeDir, out.slice(1));
  return out;
}

/** Looks a bare command name up on PATH; returns undefined when absent. */
export function findOnPath(
  name: string,
  pathEnv: string | undefined,
  isExecutable: (f: string) => boolean,
): string | undefined {
  if (name.includes("/")) return isExecutable(name) ? name : undefined;
  for (const dir of (pathEnv ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

export function resolveInterpreter(inputs: InterpreterInputs): Resolution {
  const setting = inputs.setting?.trim();
  if (setting) {
    const expanded = expandSettingPath(setting, inputs.homeDir, inputs.workspaceFolder);
    const found = findOnPath(expanded, inputs.pathEnv, inputs.isExecutable);
    // An explicit setting that does not work is an error, not a cue to silently pick another Python.
    if (found === undefined) {
      return {
        ok: false,
        message: `denpex.python.interpreter is set to "${setting}", which is not an executable file.`,
      };
    }
    return { ok: true, interpreter: { command: found, source: "setting" } };
  }
  const fromExtension = inputs.pythonExtension?.trim();
  if (fromExtension && inputs.isExecutable(fromExtension)) {
    return { ok: true, interpreter: { command: fromExtension, source: "python-extension" } };
  }
  const onPath = findOnPath("python3", inputs.pathEnv, inputs.isExecutable);
  if (onPath !== undefined) return { ok: true, interpreter: { command: onPath, source: "path" } };
  return {
    ok: false,
    message:
      "No Python interpreter found: set denpex.python.interpreter, select one with the Python extension, or put python3 on PATH.",
  };
}

/** Arguments that print denpex's version, or fail when it is not importable. */
export const IMPORT_CHECK_ARGS: readonly string[] = [
  "-c",
  "import sys, denpex; sys.stdout.write(denpex.__version__)",
];

/** Arguments that start the server over stdio. */
export const SERVE_ARGS: readonly string[] = ["-m", "denpex", "serve"];

/** Arguments that install denpex from the wheel shipped in the .vsix (or a source checkout). */
export function pipInstallArgs(target: string): string[] {
  return ["-m", "pip", "install", "--disable-pip-version-check", target];
}

/** One line for the user when denpex is missing from the chosen interpreter. */
export function missingDenpexMessage(candidate: InterpreterCandidate, detail: string): string {
  const origin =
    candidate.source === "setting"
      ? "from denpex.python.interpreter"
      : candidate.source === "python-extension"
        ? "selected in the Python extension"
        : "found on PATH";
  const reason =
    detail
      .trim()
      .split("\n")
      .filter((l) => l.trim() !== "")
      .pop() ?? "import failed";
  return `Denpex is not installed in ${candidate.command} (${origin}): ${reason}`;
}
