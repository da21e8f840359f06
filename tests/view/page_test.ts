/**
 * The page as a string: every surface event of the log drawn exactly once,
 * deep history continued at the end, the same bytes for the same log, and
 * a policy that allows exactly the page's own style and script.
 */
import {
  compact,
  Draft,
  type EventDraft,
  isSurfaceEvent,
  rewind,
  Session,
  SessionSeq,
} from "@palimpsest/session";
import { renderSessionHtml, writeSessionHtml } from "@palimpsest/session/view";
import { Effect, Result } from "effect";
import fc from "fast-check";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { MAX_DEPTH } from "../../src/view/page.ts";
import { historySessionArb } from "../_helpers/session_gen.ts";
import { branchedSession, HOSTILE, richSession } from "./_sessions.ts";

const drawnSeqs = (html: string): number[] =>
  [...html.matchAll(/<li class="m[^"]*" id="e(\d+)"/g)].map((m) =>
    Number(m[1])
  );

const surfaceEventSeqs = (session: Session): number[] =>
  Result.getOrThrow(Session.events(session)).filter(isSurfaceEvent).map((e) =>
    e.seq
  );

Deno.test("renderSessionHtml() draws every surface event of the log exactly once", () => {
  fc.assert(
    fc.property(historySessionArb, (session) => {
      const drawn = drawnSeqs(Result.getOrThrow(renderSessionHtml(session)));
      assert.deepEqual(
        [...drawn].sort((a, b) => a - b),
        surfaceEventSeqs(session),
      );
    }),
    { numRuns: 60 },
  );
});

Deno.test("renderSessionHtml() draws every surface event once when a rewind brings back what a compaction shadowed", () => {
  const program = Effect.gen(function* () {
    let session = Session.make({ id: "x", createdAt: 0, isSeeded: false });
    session = yield* Session.appendAll(session, [
      Draft.user("a", { id: "a" }),
      Draft.user("b", { id: "b" }),
      Draft.user("c", { id: "c" }),
    ]);
    session = yield* compact(session, {
      startSeq: 0,
      endSeq: 1,
      summary: "a and b",
      compactionId: "k",
    });
    // Back to before the compaction: 0 and 1 return, the summary goes.
    return yield* rewind(session, {
      to: 2,
      event: Draft.user("d", { id: "d" }),
    });
  });
  for (const session of [Effect.runSync(program), branchedSession()]) {
    const drawn = drawnSeqs(Result.getOrThrow(renderSessionHtml(session)));
    assert.deepEqual(
      [...drawn].sort((a, b) => a - b),
      surfaceEventSeqs(session),
    );
  }
});

Deno.test("renderSessionHtml() continues history nested deeper than MAX_DEPTH at the end of the page", () => {
  // Given a chain of summaries, each replacing the one before.
  const drafts: EventDraft[] = [Draft.user("u0", { id: "u0" })];
  const depth = MAX_DEPTH * 2 + 3;
  for (let i = 1; i <= depth; i++) {
    drafts.push({
      type: "user/message",
      surfaceOp: {
        op: "replace",
        startSeq: SessionSeq.make(i - 1),
        endSeq: SessionSeq.make(i - 1),
      },
      sourceEventSeqs: [SessionSeq.make(i - 1)],
      data: {
        id: `s${i}`,
        role: "user",
        content: [{ type: "text", text: `summary ${i}` }],
        source: { kind: "plugin", plugin: "compaction" },
      },
    });
  }
  const session = Effect.runSync(Session.appendAll(
    Session.make({ id: "chain", createdAt: 0, isSeeded: false }),
    drafts,
  ));
  // When it is drawn, then each event appears once, and the chain goes on
  // in linked sections past every MAX_DEPTH levels.
  const html = Result.getOrThrow(renderSessionHtml(session));
  assert.deepEqual(
    [...drawnSeqs(html)].sort((a, b) => a - b),
    surfaceEventSeqs(session),
  );
  const sections = [...html.matchAll(/<section id="x(\d+)">/g)].map((m) =>
    Number(m[1])
  );
  assert.deepEqual(sections, [depth - MAX_DEPTH, depth - 2 * MAX_DEPTH]);
  for (const seq of sections) assert.ok(html.includes(`href="#x${seq}"`));
});

Deno.test("renderSessionHtml() gives the same bytes for the same log, in one string or in chunks", () => {
  const { session } = richSession(HOSTILE);
  const page = Result.getOrThrow(renderSessionHtml(session, { version: 2 }));
  assert.equal(
    Result.getOrThrow(renderSessionHtml(session, { version: 2 })),
    page,
  );
  const chunks: string[] = [];
  writeSessionHtml(session, (chunk) => chunks.push(chunk), { version: 2 });
  assert.equal(chunks.join(""), page);
});

Deno.test("renderSessionHtml() allows by hash exactly the page's own style and scripts", () => {
  const html = Result.getOrThrow(
    renderSessionHtml(richSession(HOSTILE).session),
  );
  const policy = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/
    .exec(html)?.[1]?.replaceAll("&#39;", "'");
  assert.ok(policy !== undefined);
  const hash = (text: string) =>
    `'sha256-${createHash("sha256").update(text).digest("base64")}'`;
  const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((m) =>
    m[1] ?? ""
  );
  const styles = [...html.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) =>
    m[1] ?? ""
  );
  assert.equal(scripts.length, 2);
  assert.equal(styles.length, 1);
  assert.deepEqual(policy.split("; "), [
    "default-src 'none'",
    `style-src ${styles.map(hash).join(" ")}`,
    `script-src ${scripts.map(hash).join(" ")}`,
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ]);
});

Deno.test("renderSessionHtml() marks a node that derives no message, and only it", () => {
  // Given a user message and an assistant message with empty content.
  const session = Effect.runSync(Session.appendAll(
    Session.make({ id: "empty", createdAt: 0, isSeeded: false }),
    [
      Draft.user("hi", { id: "u" }),
      Draft.assistant({
        id: "a",
        turn: 0,
        step: 0,
        provider: "scripted",
        model: "demo-1",
      }),
    ],
  ));
  // When the page is drawn, then only the empty node has the class `em`.
  const classes = [
    ...Result.getOrThrow(renderSessionHtml(session)).matchAll(
      /<li class="(m[^"]*)" id="e(\d+)"/g,
    ),
  ].map((m) => [Number(m[2]), m[1]?.split(" ").includes("em")]);
  assert.deepEqual(classes, [[0, false], [1, true]]);
});
