/**
 * The page links each compaction and prune to its own list of what it
 * dropped: given a log with a prune, two compactions (the second over the
 * first's summary) and a rewind that undoes the second, when it is drawn,
 * then each has a `#d<seq>` section listing the nodes it took off, each
 * linking to where it is drawn, and each replacement links to its section.
 */
import assert from "node:assert/strict";
import { Result } from "effect";
import { renderSessionHtml } from "@palimpsest/session/view";
import { droppedLog } from "../_helpers/dropped_log.ts";

const html = Result.getOrThrow(renderSessionHtml(droppedLog()));

/** The section `#d<seq>`, up to its end. */
const section = (seq: number): string => {
  const start = html.indexOf(`<section id="d${seq}">`);
  assert.ok(start >= 0, `no section #d${seq}`);
  return html.slice(start, html.indexOf("</section>", start));
};

/** The seqs the section's list links to, in order. */
const listed = (part: string): number[] =>
  [...part.matchAll(/<li><a href="#e(\d+)">/g)].map((m) => Number(m[1]));

Deno.test("each compaction and prune has an anchored list of the nodes it dropped", () => {
  assert.deepEqual(listed(section(7)), [3]);
  assert.deepEqual(listed(section(10)), [0, 1, 7]);
  assert.deepEqual(listed(section(15)), [10, 4]);
  assert.match(
    section(10),
    /Compaction <code>c1<\/code>: replaced by <a href="#e10">#10<\/a>/,
  );
  assert.match(
    section(10),
    /start <span class="lo">#8<\/span>, summary <span class="lo">#9<\/span>, end <span class="lo">#11<\/span>/,
  );
  assert.match(section(7), /^<section id="d7"><h3>Prune: /);
});

Deno.test("a nested compaction's list links to the list of the compaction it dropped", () => {
  assert.match(
    section(15),
    /#10<\/a> user\/message · user · 12 chars · <a href="#d10">a compaction<\/a>/,
  );
  assert.match(section(10), /<a href="#d7">a prune<\/a>/);
  assert.match(section(7), /result for c1/);
});

Deno.test("a compaction a rewind went back before says it is off the current path", () => {
  assert.match(section(15), /not on the current path/);
  assert.doesNotMatch(section(10), /not on the current path/);
});

Deno.test("each replacement drawn links to its list, and every dropped node it lists is drawn", () => {
  for (const seq of [7, 10, 15]) {
    assert.ok(
      html.includes(`<a href="#d${seq}">what it dropped</a>`),
      `#${seq}`,
    );
    for (const node of listed(section(seq))) {
      assert.ok(html.includes(`id="e${node}"`), `#${node} is drawn`);
    }
  }
  // The rewind is no compaction: no list of its own.
  assert.ok(!html.includes(`id="d17"`));
});
