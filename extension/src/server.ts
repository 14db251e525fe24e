// Owns the language client: finds the interpreter, starts `python -m denpex serve`, restarts
// serially (one in flight, one queued), and restarts after crashes with backoff and a single
// notification. Everything else talks to the server through this class, which answers
// "server not running" instead of throwing undefined errors while it is down.
import * as vscode from "vscode";
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  State,
  type DocumentSelector,
  type LanguageClientOptions,
  type ServerOptions,
} from "vscode-languageclient/node";
import { ExecuteCommandRequest } from "vscode-languageclient";
import { readConfig } from "./config";
import { CrashPolicy, SerialRunner } from "./core/lifecycle";
import { SERVE_ARGS } from "./core/interpreter";
import { checkDenpex, findInterpreter, offerInstall } from "./pythonInterpreter";
import {
  DIAGNOSE_COMMAND,
  type ClientNotifications,
  type DenpexDiagnosis,
  type DiagnoseArgs,
  type Requests,
  type ServerNotifications,
} from "./protocol/methods";

export type ServerState = "stopped" | "starting" | "running" | "failed";

export class ServerNotRunningError extends Error {
  constructor(reason: string | undefined) {
    super(`The Denpex server is not running${reason ? `: ${reason}` : ""}.`);
  }
}

type Handler = (params: unknown) => void;

export class ServerManager implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private stopping = false;
  private crashTimer: NodeJS.Timeout | undefined;
  private readonly crashes = new CrashPolicy();
  private readonly runner = new SerialRunner(() => this.restartNow());
  private readonly handlers: { method: string; handler: Handler }[] = [];
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  readonly onDidChangeState = this.stateEmitter.event;
  private _state: ServerState = "stopped";
  private _reason: string | undefined;
  /** Shows a diagnosis returned by denpex.diagnose when a code action ran it. */
  onDiagnoseResult: ((result: DenpexDiagnosis, args: DiagnoseArgs | undefined) => void) | undefined;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  get state(): ServerState {
    return this._state;
  }

  /** Why the server is not running, for messages. */
  get reason(): string | undefined {
    return this._reason;
  }

  private setState(state: ServerState, reason?: string): void {
    this._state = state;
    this._reason = reason;
    this.stateEmitter.fire(state);
  }

  /** Start or restart; a manual restart forgets the crash history. */
  restart(manual = false): Promise<void> {
    if (manual) this.crashes.reset();
    if (this.crashTimer) clearTimeout(this.crashTimer);
    this.crashTimer = undefined;
    return this.runner.run().catch((err) => {
      this.log.error(`server start failed: ${err instanceof Error ? err.message : String(err)}`);
    });
  }

  /** Registers a server → client notification handler that survives restarts. */
  onNotification<M extends keyof ServerNotifications>(
    method: M,
    handler: (params: ServerNotifications[M]) => void,
  ): void {
    // The registry holds handlers of every method; each is called with its own method's params.
    const untyped = handler as Handler;
    this.handlers.push({ method, handler: untyped });
    this.client?.onNotification(method, untyped);
  }

  private runningClient(): LanguageClient {
    if (!this.client || this._state !== "running") throw new ServerNotRunningError(this._reason);
    return this.client;
  }

  async sendRequest<M extends keyof Requests>(
    method: M,
    params: Requests[M][0],
    token?: vscode.CancellationToken,
  ): Promise<Requests[M][1]> {
    return this.runningClient().sendRequest<Requests[M][1]>(method, params, token);
  }

  /** Notifications are dropped silently while the server is down (terminal data, for one). */
  sendNotification<M extends keyof ClientNotifications>(
    method: M,
    params: ClientNotifications[M],
  ): void {
    if (this.client && this._state === "running")
      void this.client
        .sendNotification(method, params)
        .catch((e) => this.log.warn(`${method}: ${String(e)}`));
  }

  async diagnose(args: DiagnoseArgs, token?: vscode.CancellationToken): Promise<DenpexDiagnosis> {
    return this.runningClient().sendRequest(
      ExecuteCommandRequest.type,
      { command: DIAGNOSE_COMMAND, arguments: [args] },
      token,
    ) as Promise<DenpexDiagnosis>;
  }

  private async stopClient(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    this.stopping = true;
    try {
      if (client.state !== State.Stopped) await client.stop(5000);
    } catch (err) {
      this.log.warn(`stopping the server: ${String(err)}`);
    } finally {
      this.stopping = false;
      await client.dispose().catch(() => undefined);
    }
  }

  private documentSelector(): DocumentSelector {
    const globs = readConfig().logs.globs;
    return [
      { language: "log" },
      ...globs
        .filter((g) => typeof g === "string" && g.trim() !== "")
        .map((pattern) => ({ scheme: "file", pattern })),
    ];
  }

  private async restartNow(): Promise<void> {
    await this.stopClient();
    this.setState("starting");
    const found = await findInterpreter(this.log);
    if (!found.ok) {
      this.log.error(found.message);
      this.setState("failed", found.message);
      void this.showStartError(found.message);
      return;
    }
    const interpreter = found.interpreter;
    let check = await checkDenpex(interpreter);
    if (!check.ok) {
      const installed = await offerInstall(
        interpreter,
        check.detail,
        this.context.extensionPath,
        this.log,
      );
      check = installed ? await checkDenpex(interpreter) : check;
      if (!check.ok) {
        this.setState("failed", `denpex is not importable from ${interpreter.command}`);
        return;
      }
    }
    this.log.info(
      `starting denpex ${check.version} with ${interpreter.command} (${interpreter.source})`,
    );
    const serverOptions: ServerOptions = {
      command: interpreter.command,
      // No `transport`: with TransportKind.stdio the client would append "--stdio".
      args: [...SERVE_ARGS],
      options: { env: { ...process.env, PYTHONUNBUFFERED: "1", PYTHONIOENCODING: "utf-8" } },
    };
    const clientOptions: LanguageClientOptions = {
      documentSelector: this.documentSelector(),
      outputChannel: this.log,
      synchronize: { configurationSection: "denpex" },
      initializationOptions: { settings: readConfig() },
      initializationFailedHandler: (error) => {
        this.log.error(
          `server initialization failed: ${error instanceof Error ? error.message : String(error)}`,
        );
        return false;
      },
      errorHandler: {
        error: (_error, _message, count) => ({
          action: (count ?? 0) < 5 ? ErrorAction.Continue : ErrorAction.Shutdown,
          handled: true,
        }),
        closed: () => {
          // A server that dies while starting fails the start (reported once, no retry loop);
          // one that dies after running is a crash and comes back with backoff.
          if (!this.stopping && this._state === "running") this.onCrash();
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
      middleware: {
        // denpex.diagnose also runs from a code action ("diagnose the surrounding block");
        // its result is shown like the command palette's.
        executeCommand: async (command, args, next) => {
          const result = await next(command, args);
          if (
            command === DIAGNOSE_COMMAND &&
            result &&
            typeof result === "object" &&
            this.onDiagnoseResult
          ) {
            this.onDiagnoseResult(result as DenpexDiagnosis, args[0] as DiagnoseArgs | undefined);
          }
          return result;
        },
      },
    };
    const client = new LanguageClient("denpex", "Denpex", serverOptions, clientOptions);
    for (const { method, handler } of this.handlers) client.onNotification(method, handler);
    this.client = client;
    try {
      await client.start();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.setState("failed", message);
      throw err;
    }
    this.setState("running");
  }

  private onCrash(): void {
    const decision = this.crashes.onCrash(Date.now());
    const reason = "the server process exited unexpectedly";
    this.log.error(
      `${reason}; ${decision.action === "restart" ? `restarting in ${decision.delayMs} ms` : "giving up after repeated crashes"}`,
    );
    this.setState("failed", reason);
    if (decision.notify) {
      void vscode.window
        .showWarningMessage(
          decision.action === "restart"
            ? "Denpex: the server stopped unexpectedly and is being restarted."
            : "Denpex: the server keeps stopping; it will not be restarted automatically.",
          "Show Logs",
        )
        .then((c) => c && this.log.show());
    }
    if (decision.action === "restart") {
      this.crashTimer = setTimeout(() => {
        this.crashTimer = undefined;
        void this.runner.run().catch((e) => this.log.error(String(e)));
      }, decision.delayMs);
    }
  }

  private async showStartError(message: string): Promise<void> {
    const choice = await vscode.window.showErrorMessage(
      `Denpex: ${message}`,
      "Open Settings",
      "Show Logs",
    );
    if (choice === "Open Settings")
      await vscode.commands.executeCommand(
        "workbench.action.openSettings",
        "denpex.python.interpreter",
      );
    else if (choice === "Show Logs") this.log.show();
  }

  async dispose(): Promise<void> {
    if (this.crashTimer) clearTimeout(this.crashTimer);
    await this.stopClient();
    this.stateEmitter.dispose();
  }
}
