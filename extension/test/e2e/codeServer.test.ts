// End to end in real VS Code: the built .vsix installed into code-server, driven through
// headless Debian Chromium with playwright-core the way a user works: open a multi-rank log,
// select the traceback, run "Denpex: Diagnose" from the Command Palette, read the diagnosis
// view and the Problems panel, run a verification command from a code action and from the
// view, and open the drift view fed by a watched checkpoint directory. Screenshots go to
// docs/screenshots/.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  readdirSync,
} from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { chromium, type Browser, type BrowserContext, type Page } from "playwright-core";
import { ROOT, startCodeServer, type CodeServer } from "./codeServer";
import {
  goToLine,
  openFile,
  runCommand,
  selectLines,
  text,
  waitForWorkbench,
  webview,
} from "./workbench";
import { STEPS, writeRun } from "../support/driftRuns";
import { denpexPython } from "../protocol/harness";

const SHOTS = path.join(ROOT, "docs/screenshots");
const LOG_NAME = "job-4821.log";
const VSIX = path.join(ROOT, "denpex-0.1.0.vsix");

let sandbox: string;
let server: CodeServer;
let context: BrowserContext;
let browser: Browser | undefined;
let page: Page;
let logLines: string[];

before(async () => {
  if (!existsSync(VSIX)) throw new Error(`${VSIX} is missing: npm run package builds it`);
  sandbox = mkdtempSync(path.join(os.tmpdir(), "denpex-e2e-"));
  const workspace = path.join(sandbox, "workspace");
  mkdirSync(workspace, { recursive: true });
  copyFileSync(
    path.join(ROOT, "extension/test/fixtures/multirank-oom.log"),
    path.join(workspace, LOG_NAME),
  );
  logLines = readFileSync(path.join(workspace, LOG_NAME), "utf8").split("\n");
  writeRun(path.join(workspace, "checkpoints/reference"), "reference");
  writeRun(path.join(workspace, "checkpoints/faulty"), "faulty");
  server = await startCodeServer({
    sandbox,
    vsix: VSIX,
    workspace,
    userSettings: {
      "denpex.python.interpreter": denpexPython(),
      "denpex.checkpoints.watch": [path.join(workspace, "checkpoints/faulty")],
      "denpex.checkpoints.reference": path.join(workspace, "checkpoints/reference"),
      "denpex.drift.device": "cpu",
      // The JSON-RPC traffic lands in the Denpex log under user-data/logs, for failures.
      "denpex.trace.server": "messages",
      "security.workspace.trust.enabled": false,
      "workbench.startupEditor": "none",
      "workbench.tips.enabled": false,
      "workbench.enableExperiments": false,
      "telemetry.telemetryLevel": "off",
      "extensions.autoCheckUpdates": false,
      "extensions.autoUpdate": false,
      "update.mode": "none",
      "chat.disableAIFeatures": true,
      "workbench.colorTheme": "Default Dark Modern",
      // xterm then mirrors terminal text into the DOM, where the test can read it.
      "editor.accessibilitySupport": "on",
      "terminal.integrated.shellIntegration.enabled": true,
    },
  });
  const userDataDir = path.join(sandbox, "chromium");
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run",
      "--disable-quic",
    ],
    viewport: { width: 1440, height: 900 },
    permissions: ["clipboard-read", "clipboard-write"],
  });
  browser = context.browser() ?? undefined;
  page = context.pages()[0] ?? (await context.newPage());
  await page.goto(server.url);
  await waitForWorkbench(page);
});

after(async () => {
  if (page && process.exitCode)
    await page
      .screenshot({ path: path.join(ROOT, ".cache/e2e-failure.png") })
      .catch(() => undefined);
  await context?.close().catch(() => undefined);
  await browser?.close().catch(() => undefined);
  await server?.stop();
  if (sandbox && !process.env.DENPEX_E2E_KEEP) rmSync(sandbox, { recursive: true, force: true });
});

function shot(name: string): string {
  mkdirSync(SHOTS, { recursive: true });
  return path.join(SHOTS, name);
}

const OOM = () => logLines.findIndex((l) => l.includes("torch.OutOfMemoryError")) + 1; // 1-based

test("the status item shows Denpex running locally", { timeout: 120_000 }, async () => {
  const item = page.locator(".statusbar-item", { hasText: "Denpex" });
  await item.first().waitFor({ timeout: 60_000 });
});

test(
  "Denpex: Diagnose on the selected traceback shows the initiating rank in the diagnosis view",
  { timeout: 180_000 },
  async () => {
    await openFile(page, LOG_NAME);
    const first = logLines.findIndex((l) => l.startsWith("[rank3]: Traceback")) + 1;
    const last = logLines.findIndex((l) => l.includes("local_rank: 3")) + 1;
    await selectLines(page, first, last);
    await runCommand(page, "Denpex: Diagnose");
    const view = await webview(page, "Denpex Diagnosis", "Denpex diagnosis");
    // The view names the lines it was given: proof that the whole traceback was selected.
    await view
      .locator(".origin", { hasText: `${LOG_NAME}, lines ${first}-${last}` })
      .waitFor({ timeout: 60_000 });
    const initiating = view.locator("dd.initiating");
    assert.match(await initiating.innerText(), /rank 3\b.*GPU 3/);
    // As the server phrases rank sets (the CLI and the Markdown export print the same).
    assert.match(await view.locator("dd.collateral").innerText(), /0-2,4-7/);
    assert.match(await text(view.locator("h2")), /out of memory/i);
    const evidence = view.locator("button[data-action=openEvidence]");
    assert.ok((await evidence.count()) > 0, "evidence lines listed");
    assert.ok(
      (await view.locator("button[data-action=runInTerminal]").count()) > 0,
      "verification commands with Run in terminal",
    );
    await page.screenshot({ path: shot("diagnosis-view.png") });
  },
);

test("clicking an evidence line jumps to it in the log", { timeout: 60_000 }, async () => {
  const view = await webview(page, "Denpex Diagnosis", "Denpex diagnosis");
  const initiating = view.locator("li.ev-initiating button[data-action=openEvidence]").first();
  const target = Number(await initiating.getAttribute("data-line"));
  assert.equal(target, OOM());
  await initiating.click();
  // The cursor position in the status bar proves the editor moved to the evidence line.
  await page
    .locator(".statusbar-item", { hasText: `Ln ${target},` })
    .first()
    .waitFor({ timeout: 20_000 });
});

test(
  "the Problems panel lists the initiating error and the grouped collateral warning",
  { timeout: 120_000 },
  async () => {
    await runCommand(page, "View: Focus Problems (Errors, Warnings, Infos)");
    const rows = page.locator(".markers-panel .monaco-list-row");
    await rows
      .filter({ hasText: /out of memory/i })
      .first()
      .waitFor({ timeout: 60_000 });
    const all = await text(rows);
    assert.match(all, /CUDA out of memory/i);
    assert.match(all, /cuda-oom/);
    assert.match(all, /0-2, ?4-7/, "collateral ranks grouped in one warning");
    await page.screenshot({ path: shot("problems-panel.png") });
  },
);

test(
  'a code action on the initiating line runs its verification command in the "Denpex verify" terminal',
  { timeout: 120_000 },
  async () => {
    await openFile(page, LOG_NAME);
    await goToLine(page, OOM());
    await page.keyboard.press("Control+.");
    const action = page
      .locator(".action-widget .monaco-list-row, .context-view .action-item", {
        hasText: /run `.*` in a terminal/,
      })
      .first();
    await action.waitFor({ timeout: 30_000 });
    const title = await action.innerText();
    const command = /run `(.*)` in a terminal/.exec(title)?.[1] ?? "";
    assert.ok(command.length > 0, title);
    await page.screenshot({ path: shot("code-action.png") });
    await action.click();
    await page
      .locator(".terminal-tabs-entry, .single-terminal-tab, .terminal-tab", {
        hasText: "Denpex verify",
      })
      .first()
      .waitFor({ timeout: 30_000 });
    // With accessibility support on, xterm mirrors its rows into the DOM.
    const words = command.split(/\s+/).slice(0, 2).join(" ");
    await page
      .locator(".xterm-accessibility-tree, .xterm-rows", { hasText: words })
      .first()
      .waitFor({ state: "attached", timeout: 30_000 });
  },
);

test(
  "a failure printed in a shell-integrated terminal raises one notification that opens its diagnosis",
  { timeout: 120_000 },
  async () => {
    await runCommand(page, "Notifications: Clear All Notifications");
    await runCommand(page, "Terminal: Create New Terminal");
    // Shell integration reports the prompt once bash has sourced VS Code's script.
    await page.waitForTimeout(3000);
    // A job prints after it starts. VS Code streams a command's output only from the moment
    // the extension host hears of the start, so an instant `cat` can finish before that when
    // the machine is busy (the trace then shows the command end and no data).
    await page.keyboard.type(`sleep 2; cat ${LOG_NAME}`);
    await page.keyboard.press("Enter");
    // Named as the command started (the shell), not after the process VS Code retitles it to.
    const toast = page.locator(".notification-toast", {
      hasText: /Denpex: CUDA out of memory.*in terminal "bash"/,
    });
    await toast.first().waitFor({ timeout: 60_000 });
    assert.match(await toast.first().innerText(), /initiating rank 3/);
    await page.screenshot({ path: shot("terminal-finding.png") });
    await toast.first().locator(".monaco-button", { hasText: "Show Diagnosis" }).click();
    const view = await webview(page, "Denpex Diagnosis", "Denpex diagnosis");
    await view.locator(".origin", { hasText: /terminal "/ }).waitFor({ timeout: 30_000 });
    assert.match(await view.locator("dd.initiating").innerText(), /rank 3/);
  },
);

test("the drift view charts the watched run with its onset", { timeout: 300_000 }, async () => {
  await runCommand(page, "Denpex: Show Drift View");
  const view = await webview(page, "Denpex Drift", "Denpex drift");
  await view.locator("svg.chart polyline.series").first().waitFor({ timeout: 240_000 });
  // A vertical SVG line has a zero-width box, which playwright calls hidden: wait for presence.
  await view.locator("line.onset").first().waitFor({ state: "attached", timeout: 120_000 });
  const table = await view.locator("table").innerText();
  assert.match(table, /gradual_drift/);
  assert.match(
    (await view.locator("text.onset-label").first().textContent()) ?? "",
    /onset step \d+/,
  );
  assert.equal(await view.locator("svg.chart").first().locator("circle").count(), STEPS.length);
  await page.screenshot({ path: shot("drift-view.png") });
});

test("screenshots were written", () => {
  const files = readdirSync(SHOTS);
  for (const f of ["diagnosis-view.png", "problems-panel.png", "drift-view.png"])
    assert.ok(files.includes(f), f);
});
