/// <reference lib="dom" />
/**
 * A chat page in a real browser (Debian's chromium driven by
 * playwright-core) streams an answer that a server process reads from the
 * log while `runTurn` writes it: reloaded mid-answer, the page resumes and
 * shows the whole answer; with the server SIGKILLed mid-answer and started
 * again on the same JSONL store, the page shows the partial answer closed
 * as interrupted.
 *
 * The page's script (the AI SDK's chat and `DefaultChatTransport`, see
 * `_chat_page.ts`) is bundled by `deno bundle`. Every wait is for a DOM
 * condition, with a timeout; nothing depends on how fast the answer goes.
 * With `PALIMPSEST_SCREENSHOT=<file>` the page after the restart is saved
 * there (docs/resume-after-kill.png comes from it).
 */
import type { BrowserContext, Page } from "playwright-core";
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { launchChromium } from "../view/_browser.ts";
import { tempDir } from "../_helpers/store.ts";
import { ANSWER } from "./_chat_server.ts";

const here = (file: string): string => new URL(file, import.meta.url).pathname;

const STYLE =
  `body{font:15px/1.5 system-ui,sans-serif;margin:16px;max-width:760px}
ol{list-style:none;padding:0}li{margin:0 0 10px;padding:8px 10px;border-radius:6px}
li[data-role=user]{background:#eef3fb}li[data-role=assistant]{background:#f4f4f4}
li b{display:block;font-size:12px;color:#555}
.interrupted{display:inline-block;margin-top:4px;padding:0 6px;border-radius:4px;
background:#fbe3c8;color:#8a4b00;font-style:normal;font-size:12px}
#status{color:#777;font-size:12px}`;

/** The chat page's folder: `index.html` and the bundled `page.js`. */
const buildPage = async (): Promise<string> => {
  const web = tempDir("palimpsest-chat-web-");
  const bundle = await new Deno.Command(Deno.execPath(), {
    args: [
      "bundle",
      "--platform",
      "browser",
      "--minify",
      "-o",
      path.join(web, "page.js"),
      here("./_chat_page.ts"),
    ],
    stdout: "null",
    stderr: "piped",
  }).output();
  assert.ok(bundle.success, new TextDecoder().decode(bundle.stderr));
  fs.writeFileSync(
    path.join(web, "index.html"),
    `<!doctype html><meta charset="utf-8"><title>chat</title>
<style>${STYLE}</style>
<ol id="messages"></ol>
<form id="form"><input id="input" autocomplete="off"> <button>Send</button>
<span id="status"></span></form>
<script type="module" src="/page.js"></script>`,
  );
  return web;
};

/** The chat server on `port` (0: any); resolves once it listens. */
const startServer = (
  root: string,
  web: string,
  port: number,
): Promise<{ readonly server: ChildProcess; readonly port: number }> =>
  new Promise((resolve, reject) => {
    const server = spawn(
      Deno.execPath(),
      ["run", "-A", here("./_chat_server.ts"), root, web, String(port)],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    server.on("error", reject);
    server.on("exit", (code) => reject(new Error(`server exited ${code}`)));
    let out = "";
    server.stdout?.on("data", (data: Uint8Array) => {
      out += new TextDecoder().decode(data);
      const listening = out.match(/listening (\d+)/);
      if (listening?.[1] !== undefined) {
        resolve({ server, port: Number(listening[1]) });
      }
    });
  });

/** SIGKILLs the server; resolves once it is gone. */
const kill = (server: ChildProcess): Promise<void> =>
  new Promise((resolve) => {
    if (server.exitCode !== null || server.signalCode !== null) resolve();
    server.on("exit", () => resolve());
    server.kill("SIGKILL");
  });

const TIMEOUT = 60_000;

/** The text of the page's answer. */
const answerText = (page: Page): Promise<string> =>
  page.locator("li[data-role=assistant] .text").evaluate((el) =>
    el.textContent ?? ""
  );

/** Waits until the page's answer includes `text`. */
const waitForText = (page: Page, text: string): Promise<unknown> =>
  page.waitForFunction(
    (want) =>
      document.querySelector("li[data-role=assistant] .text")?.textContent
        ?.includes(want) === true,
    text,
    { timeout: TIMEOUT },
  );

/**
 * Opens chat `id` on the page, sends a message from its form and waits
 * until the answer streams (its 21st word is shown); returns what it shows.
 */
const startAnswer = async (
  page: Page,
  port: number,
  id: string,
): Promise<string> => {
  await page.goto(`http://127.0.0.1:${port}/?id=${id}`);
  await page.locator("#input").fill("Count.");
  await page.locator("#input").press("Enter");
  await waitForText(page, "w20 ");
  return await answerText(page);
};

Deno.test({
  name:
    "a chat page resumes a streaming answer from the log after a reload and after the server is killed",
  // playwright keeps its connection's timers and pipes until the browser is
  // closed, which the end does.
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    const web = await buildPage();
    const root = tempDir("palimpsest-chat-");
    const profile = fs.mkdtempSync(
      path.join(os.tmpdir(), "palimpsest-chromium-"),
    );
    let { server, port } = await startServer(root, web, 0);
    let context: BrowserContext | undefined;
    try {
      context = await launchChromium(profile, {
        viewport: { width: 760, height: 150 },
      });
      const page = await context.newPage();
      const errors: string[] = [];
      page.on("pageerror", (error) => errors.push(error.message));

      await t.step(
        "reloaded mid-answer, the page shows what streamed, then the rest",
        async () => {
          const before = await startAnswer(page, port, "reload");
          assert.ok(ANSWER.startsWith(before) && before !== ANSWER);
          await page.reload();
          // No message is sent again: the page resumed on its own.
          await waitForText(page, ANSWER);
          await page.locator("#status", { hasText: "ready" }).waitFor({
            timeout: TIMEOUT,
          });
          assert.equal(await answerText(page), ANSWER);
          assert.equal(await page.locator(".interrupted").count(), 0);
          assert.equal(await page.locator("li[data-role=user]").count(), 0);
        },
      );

      await t.step(
        "with the server killed mid-answer and started again, the page shows the partial answer, interrupted",
        async () => {
          const before = await startAnswer(page, port, "kill");
          await kill(server);
          ({ server } = await startServer(root, web, port));
          await page.reload();
          await page.locator(".interrupted").waitFor({ timeout: TIMEOUT });
          const after = await answerText(page);
          // What streamed before the kill is there, the rest is not.
          assert.ok(after.startsWith(before), `${after} after ${before}`);
          assert.ok(ANSWER.startsWith(after) && after !== ANSWER, after);
          const screenshot = Deno.env.get("PALIMPSEST_SCREENSHOT");
          if (screenshot !== undefined) {
            await page.screenshot({ path: screenshot });
          }
        },
      );
      assert.deepEqual(errors, []);
    } finally {
      await context?.close();
      await kill(server);
      fs.rmSync(profile, { recursive: true, force: true });
    }
  },
});
