// Drives the real `denpex serve` over stdio with vscode-languageserver-protocol, using the
// extension's own method constants and payload types, and validates what the server sends
// against shared-schema/.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import * as path from "node:path";
import Ajv2020 from "ajv/dist/2020";
import {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
  InitializeRequest,
  InitializedNotification,
  ShutdownRequest,
  ExitNotification,
  PublishDiagnosticsNotification,
  ConfigurationRequest,
  WorkDoneProgressCreateRequest,
  RegistrationRequest,
  type ProtocolConnection,
  type PublishDiagnosticsParams,
} from "vscode-languageserver-protocol/node";

export const ROOT = path.resolve(__dirname, "../../..");

/** The interpreter the Makefile passes, else the project venv, else python3. */
export function denpexPython(): string {
  if (process.env.DENPEX_PYTHON) return process.env.DENPEX_PYTHON;
  const venv = path.join(ROOT, ".venv/bin/python");
  return existsSync(venv) ? venv : "python3";
}

const ajv = new Ajv2020({ allErrors: true, strict: false });
for (const f of readdirSync(path.join(ROOT, "shared-schema")).filter((f) =>
  f.endsWith(".schema.json"),
)) {
  const schema = JSON.parse(readFileSync(path.join(ROOT, "shared-schema", f), "utf8"));
  // Schemas refer to each other by file name; register each under that name too.
  ajv.addSchema(schema, f);
}

/** Throws with ajv's errors when `value` does not conform to shared-schema/<file>[#/pointer]. */
export function assertSchema(file: string, value: unknown): void {
  const validate = ajv.getSchema(file);
  if (!validate) throw new Error(`schema ${file} not found in shared-schema/`);
  if (!validate(value))
    throw new Error(
      `${file}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value).slice(0, 2000)}`,
    );
}

export function hasSchema(file: string): boolean {
  return ajv.getSchema(file) !== undefined;
}

type Waiter = { test: (v: unknown) => boolean; resolve: (v: unknown) => void };

export class ServerSession {
  readonly process: ChildProcess;
  readonly connection: ProtocolConnection;
  readonly notifications: { method: string; params: unknown }[] = [];
  readonly diagnostics = new Map<string, PublishDiagnosticsParams>();
  readonly stderr: string[] = [];
  private waiters: { method: string; waiter: Waiter }[] = [];
  settings: Record<string, unknown>;

  constructor(settings: Record<string, unknown> = {}, cwd = ROOT) {
    this.settings = settings;
    this.process = spawn(denpexPython(), ["-m", "denpex", "serve"], {
      cwd,
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, PYTHONUNBUFFERED: "1" },
    });
    this.process.stderr!.on("data", (d: Buffer) => this.stderr.push(d.toString()));
    this.connection = createProtocolConnection(
      new StreamMessageReader(this.process.stdout!),
      new StreamMessageWriter(this.process.stdin!),
    );
    this.connection.onNotification(PublishDiagnosticsNotification.type, (p) => {
      this.diagnostics.set(p.uri, p);
      this.record(PublishDiagnosticsNotification.method, p);
    });
    this.connection.onUnhandledNotification((m) => this.record(m.method, m.params));
    this.connection.onRequest(ConfigurationRequest.type, (p) =>
      p.items.map((i) =>
        i.section === "denpex" || i.section === undefined ? this.settings : null,
      ),
    );
    this.connection.onRequest(WorkDoneProgressCreateRequest.type, () => null);
    this.connection.onRequest(RegistrationRequest.type, () => undefined);
    this.connection.listen();
  }

  private record(method: string, params: unknown): void {
    this.notifications.push({ method, params });
    const still: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (w.method === method && w.waiter.test(params)) w.waiter.resolve(params);
      else still.push(w);
    }
    this.waiters = still;
  }

  /** Resolves with the first notification (already received or future) that matches. */
  waitFor<T>(method: string, test: (p: T) => boolean = () => true, timeoutMs = 20_000): Promise<T> {
    const seen = this.notifications.find((n) => n.method === method && test(n.params as T));
    if (seen) return Promise.resolve(seen.params as T);
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new Error(
              `timed out after ${timeoutMs} ms waiting for ${method}; server stderr:\n${this.stderr.join("").slice(-3000)}`,
            ),
          ),
        timeoutMs,
      );
      this.waiters.push({
        method,
        waiter: {
          test: (v) => test(v as T),
          resolve: (v) => {
            clearTimeout(timer);
            resolve(v as T);
          },
        },
      });
    });
  }

  async initialize(rootPath = ROOT): Promise<unknown> {
    const result = await this.connection.sendRequest(InitializeRequest.type, {
      processId: process.pid,
      rootUri: `file://${rootPath}`,
      workspaceFolders: [{ uri: `file://${rootPath}`, name: path.basename(rootPath) }],
      capabilities: {
        workspace: {
          configuration: true,
          didChangeConfiguration: { dynamicRegistration: true },
          executeCommand: {},
        },
        textDocument: {
          publishDiagnostics: { relatedInformation: true },
          hover: { contentFormat: ["markdown"] },
          codeAction: {},
        },
        window: { workDoneProgress: true, showMessage: {} },
      },
      initializationOptions: { settings: this.settings },
    });
    await this.connection.sendNotification(InitializedNotification.type, {});
    return result;
  }

  async close(): Promise<number | null> {
    const exited = new Promise<number | null>((resolve) => {
      if (this.process.exitCode !== null) resolve(this.process.exitCode);
      else this.process.once("exit", (code) => resolve(code));
    });
    try {
      await Promise.race([
        this.connection.sendRequest(ShutdownRequest.type),
        new Promise((r) => setTimeout(r, 5000)),
      ]);
      await this.connection.sendNotification(ExitNotification.type);
    } catch {
      // Already gone: exit code below tells.
    }
    const timer = setTimeout(() => this.process.kill("SIGKILL"), 5000);
    const code = await exited;
    clearTimeout(timer);
    this.connection.dispose();
    return code;
  }
}

export function fixture(name: string): string {
  return path.join(ROOT, "extension/test/fixtures", name);
}
