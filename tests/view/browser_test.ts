/// <reference lib="dom" />
/**
 * The page in a real headless chromium: it loads nothing, shows the surface
 * `deriveMessages` gives, opens a replacement onto what it shadowed
 * (recursively), reads without JavaScript, and never runs what a log says.
 */
import {
  deriveMessagesWithSources,
  Session,
  type SessionEvent,
} from "@palimpsest/session";
import { renderSessionHtml } from "@palimpsest/session/view";
import { Effect, Result } from "effect";
import assert from "node:assert/strict";
import { type Browser, launch, onPage } from "./_browser.ts";
import { branchedSession, HOSTILE, richSession } from "./_sessions.ts";
import { workload } from "../_helpers/workload.ts";

/** The seqs of the surface entries, in page order. */
const surfaceSeqs = (ids: ReadonlyArray<string>): number[] =>
  ids.map((id) => Number(id.slice(1)));

Deno.test({
  name: "the view page in headless chromium",
  // playwright keeps its connection's timers and pipes until the browser is
  // closed, which the last step does.
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    const browser: Browser = launch();
    try {
      const rich = richSession();
      const html = Result.getOrThrow(
        renderSessionHtml(rich.session, { version: 3 }),
      );

      await t.step(
        "the page loads with no network request and no error",
        async () => {
          await onPage(browser, html, async ({ page, requests, errors }) => {
            assert.deepEqual(requests, []);
            assert.deepEqual(errors, []);
            // The script ran under the page's own policy: it shows the tools.
            assert.equal(await page.locator("#tools").isVisible(), true);
          });
        },
      );

      await t.step(
        "the surface on the page is the one derive gives, in order",
        async () => {
          await onPage(browser, html, async ({ page }) => {
            const ids = await page.locator("ol.sf > li.m:not(.em)").evaluateAll(
              (els) => els.map((el) => el.id),
            );
            const derived = deriveMessagesWithSources(rich.session.surface);
            assert.deepEqual(surfaceSeqs(ids), derived.map((m) => m.seq));
            for (const { seq, message } of derived) {
              const shown = await page.locator(`#e${seq} > .h > b`)
                .textContent();
              const role = message.role === "user" &&
                  message.source.kind === "tool"
                ? "tool"
                : message.role;
              assert.equal(shown, role);
              for (const block of message.content) {
                if (block.type !== "text") continue;
                const body = await page.locator(`#e${seq}`).innerText();
                assert.ok(body.includes(block.text), `#${seq} shows its text`);
              }
            }
          });
        },
      );

      await t.step(
        "clicking a replacement shows what it shadowed, recursively",
        async () => {
          await onPage(browser, html, async ({ page }) => {
            const second = page.locator(`#e${rich.secondSummary}`);
            const first = page.locator(`#e${rich.firstSummary}`);
            const original = page.locator(`#e${rich.firstUser}`);
            assert.equal(await first.isVisible(), false);
            await second.locator("> details.sh > summary").click();
            assert.equal(await first.isVisible(), true);
            assert.equal(await original.isVisible(), false);
            // The lineage names what the second summary stands for.
            const lineage = await second.locator("> details.sh > .lin")
              .innerText();
            assert.ok(lineage.includes(`#${rich.firstSummary}`));
            await first.locator("> details.sh > summary").click();
            assert.equal(await original.isVisible(), true);
            assert.ok(
              (await original.innerText()).includes("Read notes.txt"),
            );
          });
        },
      );

      await t.step(
        "a pruned result shows its size before and after, and the original one click away",
        async () => {
          await onPage(browser, html, async ({ page }) => {
            await page.locator("#tools button[data-act=open]").click();
            const prunedBy = page.locator(
              `li.m.prune:has(> details.sh li#e${rich.pruned})`,
            );
            assert.equal(await prunedBy.count(), 1);
            const badge = await prunedBy.locator("> .h > .bd.prune")
              .innerText();
            assert.match(badge, /pruned 4,\d{3} → \d+ chars/);
            assert.equal(
              await page.locator(`#e${rich.pruned}`).isVisible(),
              true,
            );
          });
        },
      );

      await t.step(
        "a lineage link opens the history around its target",
        async () => {
          await onPage(browser, html, async ({ page }) => {
            assert.equal(
              await page.locator(`#e${rich.firstUser}`).isVisible(),
              false,
            );
            // The first summary's lineage links to it, two closed levels down.
            const link = page.locator(
              `#e${rich.firstSummary} > details.sh > .lin a[href="#e${rich.firstUser}"]`,
            );
            assert.equal(await link.count(), 1);
            await link.evaluate((a) => {
              if (a instanceof HTMLElement) a.click();
            });
            await page.waitForFunction((id) => {
              const el = document.getElementById(id);
              return el !== null && el.checkVisibility();
            }, `e${rich.firstUser}`);
          });
        },
      );

      await t.step(
        "the crash repair and the interrupted turn are marked",
        async () => {
          await onPage(browser, html, async ({ page }) => {
            assert.equal(await page.locator("ol.sf > li.m.fx").count(), 1);
            assert.equal(await page.locator("li.m.fx > .note.ir").count(), 1);
            const notices = await page.locator("section.notices").innerText();
            assert.match(notices, /Turn 2 was interrupted/);
          });
        },
      );

      await t.step("the message list reads without JavaScript", async () => {
        await onPage(browser, html, async ({ page, requests }) => {
          assert.deepEqual(requests, []);
          const derived = deriveMessagesWithSources(rich.session.surface);
          for (const { seq } of derived) {
            assert.equal(await page.locator(`#e${seq}`).isVisible(), true);
          }
          // Folding still works: details needs no script.
          await page.locator(`#e${rich.secondSummary} > details.sh > summary`)
            .click();
          assert.equal(
            await page.locator(`#e${rich.firstSummary}`).isVisible(),
            true,
          );
        }, { javaScript: false });
      });

      await t.step(
        "hostile content in every field does not execute",
        async () => {
          const hostile = richSession(HOSTILE);
          await onPage(
            browser,
            Result.getOrThrow(renderSessionHtml(hostile.session)),
            async ({ page, requests, errors }) => {
              await page.evaluate(() => {
                for (const d of document.querySelectorAll("details")) {
                  d.open = true;
                }
              });
              const seen = await page.evaluate(() => {
                const all = [...document.querySelectorAll("*")];
                return {
                  pwned: Reflect.get(window, "__pwned"),
                  scripts: document.scripts.length,
                  styles: document.querySelectorAll("style").length,
                  injected: document.querySelectorAll(
                    "img, iframe, svg [onload], #jsurl, textarea",
                  ).length,
                  handlers: all.flatMap((el) =>
                    [...el.attributes].filter((a) => a.name.startsWith("on"))
                      .map((
                        a,
                      ) => a.name)
                  ),
                  jsUrls: all.filter((el) =>
                    /^\s*javascript:/i.test(el.getAttribute("href") ?? "")
                  ).length,
                  bodyShown: getComputedStyle(document.body).display !== "none",
                };
              });
              assert.deepEqual(seen, {
                pwned: undefined,
                scripts: 2,
                styles: 1,
                injected: 0,
                handlers: [],
                jsUrls: 0,
                bodyShown: true,
              });
              assert.deepEqual(requests, []);
              assert.deepEqual(errors, []);
              // The markup is text, where the log had it (textContent: the
              // characters whatever the layout, where innerText depends on
              // what is drawn at that moment).
              const first = await page.locator(`#e${hostile.firstUser}`)
                .textContent() ?? "";
              assert.ok(
                first.includes(`<img src=x onerror="window.__pwned = 2">`),
              );
              assert.equal(
                await page.title(),
                // A title collapses ASCII whitespace only.
                `demo${HOSTILE} · palimpsest`.replace(/[\t\n\f\r ]+/g, " "),
              );
            },
          );
        },
      );

      await t.step(
        "a long surface comes in groups and still matches derive",
        async () => {
          const generated = workload({ events: 6_000, lines: false });
          const events: ReadonlyArray<SessionEvent> = generated.events;
          const session = Effect.runSync(Session.fromEvents(
            { id: "bench", createdAt: 0, isSeeded: false },
            events,
          ));
          await onPage(
            browser,
            Result.getOrThrow(renderSessionHtml(session)),
            async ({ page, requests }) => {
              assert.deepEqual(requests, []);
              const ids = await page.locator("ol.sf > li.m:not(.em)")
                .evaluateAll(
                  (els) => els.map((el) => el.id),
                );
              assert.deepEqual(
                surfaceSeqs(ids),
                deriveMessagesWithSources(session.surface).map((m) => m.seq),
              );
              const groups = page.locator("#sf > li.grp > details");
              assert.ok(await groups.count() > 2);
              assert.equal(await groups.last().getAttribute("open"), "");
              assert.equal(await groups.first().getAttribute("open"), null);
            },
          );
        },
      );
      await t.step(
        "a log with rewinds shows its branch tree, the current branch marked, and the current surface",
        async () => {
          const session = branchedSession();
          const { page, requests, errors } = await browser.open(
            Result.getOrThrow(renderSessionHtml(session)),
          );
          assert.deepEqual(requests, []);
          assert.deepEqual(errors, []);
          // Each branch under the one it leaves.
          const tree = await page.locator("section.branches li.bn")
            .evaluateAll((els) =>
              els.map((el) => [
                el.id,
                el.parentElement?.closest("li.bn")?.id ?? null,
              ])
            );
          assert.deepEqual(tree, [
            ["b0", null],
            ["b8", "b0"],
            ["b10", "b8"],
            ["b11", "b0"],
          ]);
          assert.deepEqual(
            await page.locator("section.branches li.cur").evaluateAll((els) =>
              els.map((el) => el.id)
            ),
            ["b11"],
          );
          assert.ok(
            (await page.locator("#b11 > .bh").innerText()).includes("current"),
          );
          const ids = await page.locator("ol.sf > li.m:not(.em)").evaluateAll(
            (els) => els.map((el) => el.id),
          );
          assert.deepEqual(
            surfaceSeqs(ids),
            deriveMessagesWithSources(session.surface).map((m) => m.seq),
          );
          assert.deepEqual(surfaceSeqs(ids), [1, 2, 5, 6, 11]);
          await page.close();
        },
      );
    } finally {
      await browser.close();
    }
  },
});
