/**
 * A real headless browser for the view tests: Debian's chromium (never a
 * downloaded build) driven by playwright-core, with a fresh profile. A page
 * is served from one made-up URL through request interception; every other
 * request the page makes is refused and recorded, so a test can assert
 * that the page made none.
 */
import { type BrowserContext, chromium, type Page } from "playwright-core";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** Where Debian's chromium package installs the browser. */
export const CHROMIUM = "/usr/bin/chromium";

/** The URL a page is served at. */
export const PAGE_URL = "http://palimpsest.test/page.html";

/** A page open in a tab, with what it asked for and the errors it met. */
export interface Opened {
  readonly page: Page;
  /** Every URL the page asked for but its own. */
  readonly requests: string[];
  readonly errors: string[];
}

/** A browser with a fresh profile, and a way to open a page in it. */
export interface Browser {
  /** Opens `html` in a new tab; `requests` gets every other URL asked for. */
  readonly open: (
    html: string,
    options?: { readonly javaScript?: boolean },
  ) => Promise<Opened>;
  /** Closes the browser and removes its profile. */
  readonly close: () => Promise<void>;
}

/**
 * Opens `html` in a new tab of `browser`, runs `check` on it and closes the
 * tab, also when the check fails.
 */
export const onPage = async (
  browser: Browser,
  html: string,
  check: (opened: Opened) => Promise<void>,
  options?: { readonly javaScript?: boolean },
): Promise<void> => {
  const opened = await browser.open(html, options);
  try {
    await check(opened);
  } finally {
    await opened.page.close();
  }
};

/**
 * Launches chromium headless on the profile folder `dir`, with no sandbox,
 * no background networking and no component updates.
 */
export const launchChromium = (
  dir: string,
  options: {
    readonly javaScriptEnabled?: boolean;
    readonly viewport: { readonly width: number; readonly height: number };
  },
): Promise<BrowserContext> =>
  chromium.launchPersistentContext(dir, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-background-networking",
      "--disable-component-update",
    ],
    javaScriptEnabled: options.javaScriptEnabled ?? true,
    viewport: options.viewport,
  });

/**
 * Launches chromium (on first use) headless with no sandbox, no background networking and
 * no component updates.
 *
 * @returns The browser.
 */
export function launch(): Browser {
  const contexts: Array<{ context: BrowserContext; dir: string }> = [];
  const start = async (javaScript: boolean): Promise<BrowserContext> => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-chromium-"));
    const context = await launchChromium(dir, {
      javaScriptEnabled: javaScript,
      viewport: { width: 1200, height: 900 },
    });
    contexts.push({ context, dir });
    return context;
  };
  const byMode = new Map<boolean, BrowserContext>();
  return {
    open: async (html, options = {}) => {
      const javaScript = options.javaScript ?? true;
      const context = byMode.get(javaScript) ?? await start(javaScript);
      byMode.set(javaScript, context);
      const page = await context.newPage();
      const requests: string[] = [];
      let served = false;
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));
      page.on("console", (message) => {
        if (message.type() === "error") errors.push(message.text());
      });
      page.on("dialog", (dialog) => {
        errors.push(`dialog: ${dialog.message()}`);
        void dialog.dismiss();
      });
      await page.route("**/*", (route) => {
        const url = route.request().url();
        if (url === PAGE_URL && !served) {
          served = true;
          return route.fulfill({
            status: 200,
            contentType: "text/html; charset=utf-8",
            body: html,
          });
        }
        requests.push(url);
        return route.abort();
      });
      await page.goto(PAGE_URL, { waitUntil: "load" });
      return { page, requests, errors };
    },
    close: async () => {
      for (const { context, dir } of contexts) {
        await context.close();
        fs.rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
