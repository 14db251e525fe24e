// Small helpers that drive the VS Code workbench the way a user does: keyboard and clicks.
import type { Frame, FrameLocator, Locator, Page } from "playwright-core";

export async function waitForWorkbench(page: Page): Promise<void> {
  await page.locator(".monaco-workbench").waitFor({ timeout: 120_000 });
  await page.locator(".statusbar").waitFor({ timeout: 60_000 });
}

/** Runs a command from the Command Palette by its exact title. */
export async function runCommand(page: Page, title: string): Promise<void> {
  await page.keyboard.press("F1");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible" });
  await input.fill(`>${title}`);
  const row = page
    .locator(".quick-input-list .monaco-list-row")
    .filter({ has: page.locator(".label-name", { hasText: new RegExp(`^${escapeRe(title)}$`) }) });
  await row.first().waitFor({ state: "visible", timeout: 20_000 });
  await row.first().click();
}

/** Opens a workspace file through Quick Open. */
export async function openFile(page: Page, name: string): Promise<void> {
  await page.keyboard.press("Control+P");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible" });
  await input.fill(name);
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first();
  await row.waitFor({ state: "visible", timeout: 20_000 });
  await row.click();
  await page.locator(`.tab[aria-label*="${name}"]`).first().waitFor({ timeout: 20_000 });
}

/** Puts the cursor at the start of a 1-based line with "Go to Line". */
export async function goToLine(page: Page, line: number): Promise<void> {
  await page.keyboard.press("Control+G");
  const input = page.locator(".quick-input-widget input");
  await input.waitFor({ state: "visible" });
  await input.fill(`:${line}`);
  // Under load the widget can drop an Enter and stay open. Pressing on the input itself (not
  // the page) means a repeat can never land in the editor as a newline.
  for (let attempt = 1; ; attempt++) {
    await input.press("Enter", { timeout: 5000 }).catch(() => undefined);
    try {
      await input.waitFor({ state: "hidden", timeout: 10_000 });
      break;
    } catch (err) {
      if (attempt === 3) throw err;
    }
  }
  await page.keyboard.press("Home");
  await page.keyboard.press("Home");
  await cursorAt(page, line);
}

/** Waits until the status bar shows the cursor on this 1-based line: keys reached the editor. */
export async function cursorAt(page: Page, line: number, timeout = 20_000): Promise<void> {
  const item = page
    .locator(".statusbar-item", { hasText: new RegExp(`Ln ${line}, Col 1\\b`) })
    .first();
  await item.waitFor({ timeout }).catch(async (err: Error) => {
    const shown = await page.locator(".statusbar-item").allInnerTexts();
    throw new Error(`cursor not on line ${line}; status bar: ${shown.join(" | ")}\n${err.message}`);
  });
}

/** Selects whole lines first..last (1-based, inclusive) in the active editor. */
export async function selectLines(page: Page, first: number, last: number): Promise<void> {
  // A notification or widget appearing mid-way can swallow a key press: check and redo.
  for (let attempt = 1; ; attempt++) {
    await goToLine(page, first);
    for (let i = first; i <= last; i++) await page.keyboard.press("Shift+ArrowDown", { delay: 30 });
    try {
      await cursorAt(page, last + 1, 5000);
      return;
    } catch (err) {
      if (attempt === 3) throw err;
      await page.keyboard.press("Escape");
    }
  }
}

/**
 * The page inside the webview panel whose tab has this title and whose h1 reads `heading`.
 * Each webview is an outer iframe (class "webview") holding the page in #active-frame.
 */
export async function webview(
  page: Page,
  tabTitle: string,
  heading: string,
): Promise<FrameLocator> {
  await page.locator(`.tab[aria-label*="${tabTitle}"]`).first().waitFor({ timeout: 30_000 });
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const outer = page.locator("iframe.webview");
    const count = await outer.count();
    for (let i = 0; i < count; i++) {
      const frame = page.frameLocator("iframe.webview").nth(i).frameLocator("#active-frame");
      if (
        (await frame
          .locator("h1", { hasText: heading })
          .count()
          .catch(() => 0)) > 0
      )
        return frame;
    }
    await page.waitForTimeout(250);
  }
  throw new Error(`no webview in tab "${tabTitle}" has the heading ${heading}`);
}

export function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export async function text(locator: Locator): Promise<string> {
  return ((await locator.allInnerTexts()) ?? []).join("\n");
}

export type { Frame };
