// Entry point: wires the server manager, commands, status item, terminal watching and the
// two webviews. Commands are registered before the server starts so they always answer.
import * as vscode from "vscode";
import { copyDiagnosisMarkdown, registerCommands, type CommandDeps } from "./commands";
import { needsRestart } from "./core/lifecycle";
import { DiagnosisPanel } from "./diagnosisPanel";
import { DriftPanel } from "./driftPanel";
import { DRIFT_UPDATE, FINDING, STATUS, type FindingParams } from "./protocol/methods";
import { ServerManager } from "./server";
import { StatusItem } from "./statusBar";
import { TerminalWatcher } from "./terminalWatch";

let manager: ServerManager | undefined;

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel("Denpex", { log: true });
  const server = new ServerManager(context, log);
  manager = server;
  const terminals = new TerminalWatcher(server, log);
  const driftPanel = new DriftPanel();
  const deps: CommandDeps = {
    server,
    log,
    terminals,
    driftPanel,
    diagnosisPanel: new DiagnosisPanel(server, log, () => copyDiagnosisMarkdown(deps)),
  };
  const status = new StatusItem(() => terminals.integratedTerminals);
  context.subscriptions.push(
    log,
    terminals,
    driftPanel,
    deps.diagnosisPanel,
    status,
    ...registerCommands(deps),
  );
  context.subscriptions.push({ dispose: () => void server.dispose() });

  server.onDidChangeState((s) => status.setState(s, server.reason));
  server.onDiagnoseResult = (diagnosis, args) => {
    const uri = args?.uri ? vscode.Uri.parse(args.uri) : undefined;
    deps.diagnosisPanel.show(
      diagnosis,
      uri ? `${vscode.workspace.asRelativePath(uri)} (surrounding block)` : "code action",
      uri,
    );
  };
  server.onNotification(STATUS, (params) => status.setStatus(params));
  server.onNotification(DRIFT_UPDATE, (params) => driftPanel.update(params.report));

  // One notification at a time: a burst of findings updates what "Show Diagnosis" opens
  // instead of stacking pop-ups.
  let pending: FindingParams | undefined;
  let notificationOpen = false;
  server.onNotification(FINDING, (params) => {
    pending = params;
    if (notificationOpen) return;
    const first = pending.diagnosis.findings[0];
    if (!first) return;
    notificationOpen = true;
    const who =
      first.initiating_rank !== null && first.initiator ? ` (initiating ${first.initiator})` : "";
    void vscode.window
      .showWarningMessage(
        `Denpex: ${first.title}${who} in terminal "${pending.source}".`,
        "Show Diagnosis",
      )
      .then((choice) => {
        notificationOpen = false;
        if (choice && pending)
          deps.diagnosisPanel.show(
            pending.diagnosis,
            `terminal "${pending.source}"${pending.commandLine ? `: ${pending.commandLine}` : ""}`,
          );
      });
  });

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("denpex")) status.render();
      if (needsRestart((s) => e.affectsConfiguration(s))) {
        log.info("interpreter or log globs changed: restarting the server");
        void server.restart(true);
      }
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => void server.restart(true)),
  );

  // Not awaited: a missing interpreter asks the user, and activation must not wait on that.
  void server.restart();
}

export async function deactivate(): Promise<void> {
  await manager?.dispose();
  manager = undefined;
}
