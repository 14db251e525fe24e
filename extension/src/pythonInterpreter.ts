// VS Code side of interpreter resolution: reads the setting, asks the Python extension (when
// installed) for its active interpreter, checks that denpex imports, and offers to install it.
import * as vscode from "vscode";
import { execFile } from "node:child_process";
import { accessSync, constants, statSync, readdirSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { readConfig } from "./config";
import {
  IMPORT_CHECK_ARGS,
  missingDenpexMessage,
  pipInstallArgs,
  resolveInterpreter,
  type InterpreterCandidate,
} from "./core/interpreter";

function isExecutable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
    resolveEnvironment(
      env: { path: string } | string,
    ): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
  };
}

/** The Python extension's active interpreter for the first workspace folder, if any. */
async function pythonExtensionInterpreter(
  log: vscode.LogOutputChannel,
): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension<PythonExtensionApi>("ms-python.python");
  if (!ext) return undefined;
  try {
    const api = ext.isActive ? ext.exports : await ext.activate();
    const envs = api?.environments;
    if (!envs) return undefined;
    const active = envs.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri);
    const resolved = await envs.resolveEnvironment(active);
    return resolved?.executable.uri?.fsPath;
  } catch (err) {
    log.warn(`Python extension did not report an interpreter: ${String(err)}`);
    return undefined;
  }
}

export async function findInterpreter(
  log: vscode.LogOutputChannel,
): Promise<{ ok: true; interpreter: InterpreterCandidate } | { ok: false; message: string }> {
  const setting = readConfig().python.interpreter;
  const fromExtension = setting?.trim() ? undefined : await pythonExtensionInterpreter(log);
  return resolveInterpreter({
    setting,
    pythonExtension: fromExtension,
    pathEnv: process.env.PATH,
    homeDir: os.homedir(),
    workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath,
    isExecutable,
  });
}

function run(
  command: string,
  args: readonly string[],
  timeoutMs: number,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      command,
      [...args],
      { timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
        resolve({
          code,
          stdout: String(stdout),
          stderr: String(stderr || (err && !stdout ? err.message : "")),
        });
      },
    );
  });
}

/** Checks `import denpex`; returns its version or the failure text. */
export async function checkDenpex(
  interpreter: InterpreterCandidate,
): Promise<{ ok: true; version: string } | { ok: false; detail: string }> {
  const r = await run(interpreter.command, IMPORT_CHECK_ARGS, 30_000);
  return r.code === 0
    ? { ok: true, version: r.stdout.trim() }
    : { ok: false, detail: r.stderr || r.stdout };
}

/** The wheel shipped inside the .vsix (dist/wheels), or a source checkout the extension runs from. */
export function bundledInstallTarget(extensionPath: string): string | undefined {
  const wheels = path.join(extensionPath, "dist", "wheels");
  try {
    const wheel = readdirSync(wheels).find((f) => /^denpex-.*\.whl$/.test(f));
    if (wheel) return path.join(wheels, wheel);
  } catch {
    // No wheel: a development checkout, handled below.
  }
  try {
    if (statSync(path.join(extensionPath, "pyproject.toml")).isFile()) return extensionPath;
  } catch {
    // Neither: nothing to offer.
  }
  return undefined;
}

/**
 * Tells the user denpex is missing and, if they agree, pip-installs the bundled wheel.
 * Returns true when denpex is importable afterwards.
 */
export async function offerInstall(
  interpreter: InterpreterCandidate,
  detail: string,
  extensionPath: string,
  log: vscode.LogOutputChannel,
): Promise<boolean> {
  const message = missingDenpexMessage(interpreter, detail);
  log.error(message);
  const target = bundledInstallTarget(extensionPath);
  const install = "Install Denpex";
  const choose = "Choose Interpreter";
  const choice = await vscode.window.showErrorMessage(
    target
      ? `${message}. Install it into this interpreter with pip?`
      : `${message}. Install denpex into it (pip install denpex) or choose another interpreter.`,
    ...(target ? [install, choose] : [choose]),
  );
  if (choice === choose) {
    await vscode.commands.executeCommand(
      "workbench.action.openSettings",
      "denpex.python.interpreter",
    );
    return false;
  }
  if (choice !== install || !target) return false;
  const args = pipInstallArgs(target);
  log.info(`running ${interpreter.command} ${args.join(" ")}`);
  const result = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `Installing Denpex into ${interpreter.command}…`,
    },
    () => run(interpreter.command, args, 15 * 60_000),
  );
  log.info(result.stdout);
  if (result.code !== 0) {
    log.error(result.stderr);
    void vscode.window.showErrorMessage(
      `pip install failed (exit ${result.code}); see "Denpex: Show Logs" for pip's output.`,
    );
    return false;
  }
  return (await checkDenpex(interpreter)).ok;
}
