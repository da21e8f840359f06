/**
 * What a crash left open is shown, not hidden: `verify`, `stats`,
 * `repair --dry-run` and the view name an open turn (nested ones included,
 * as 0.2's `runTurn` wrote them) and an open compaction.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { Effect, Result } from "effect";
import {
  Draft,
  type EventDraft,
  layerJsonlStore,
  type Session,
} from "@palimpsest/session";
import { renderSessionHtml } from "@palimpsest/session/view";
import { cliInProcess as run, json, tempDir } from "./_cli.ts";
import { newSession } from "../ai/_session.ts";

const assistantCall = (turn: number, callId: string): EventDraft =>
  Draft.assistant({
    id: `a-${callId}`,
    turn,
    step: 0,
    provider: "p",
    model: "m",
    toolCalls: [{ id: callId, name: "read", arguments: "{}" }],
  });

/**
 * Turn 0 crashed after its tool call was logged; 0.2's `runTurn` then ran
 * turn 1 inside it.
 */
const nested: ReadonlyArray<EventDraft> = [
  Draft.turnStart(0),
  Draft.user("read it", { id: "u0" }),
  Draft.stepStart(0, 0),
  assistantCall(0, "c1"),
  {
    type: "tool/call",
    data: { turn: 0, step: 0, callId: "c1", name: "read", arguments: "{}" },
  },
  Draft.turnStart(1),
  Draft.user("again", { id: "u1" }),
  Draft.stepStart(1, 0),
  Draft.assistant({
    id: "a1",
    turn: 1,
    step: 0,
    provider: "p",
    model: "m",
    content: "Done.",
  }),
  Draft.stepEnd(1, 0),
  Draft.turnEnd(1, "completed"),
];

/** Killed while the model wrote the summary. */
const midSummary: ReadonlyArray<EventDraft> = [
  Draft.turnStart(0),
  Draft.user("x".repeat(500), { id: "u0" }),
  Draft.stepStart(0, 0),
  { type: "compaction/start", data: { compactionId: "c3", turn: 0 } },
];

const write = async (
  drafts: ReadonlyArray<EventDraft>,
): Promise<{ file: string; session: Session }> => {
  const root = tempDir();
  const session = await Effect.runPromise(
    Effect.map(newSession(drafts), ({ handle }) => handle.session).pipe(
      Effect.scoped,
      Effect.provide(layerJsonlStore({ root })),
    ),
  );
  return { file: path.join(root, "s.jsonl"), session };
};

Deno.test("verify names a turn left open under a later turn", async () => {
  const { file } = await write(nested);
  const r = await run("verify", file, "--json");
  assert.equal(r.code, 0);
  assert.deepEqual(json(r).open, {
    turns: [{ turn: 0, startSeq: 0, step: 0 }],
    compactions: [],
  });
  const text = await run("verify", file);
  assert.match(text.stderr, /turn 0 is open/);
});

Deno.test("verify, stats and repair --dry-run name an open compaction", async () => {
  const { file } = await write(midSummary);
  const before = fs.readFileSync(file);
  const verify = json(await run("verify", file, "--json"));
  const open = {
    turns: [{ turn: 0, startSeq: 0, step: 0 }],
    compactions: [{ compactionId: "c3", startSeq: 3 }],
  };
  assert.deepEqual(verify.open, open);
  const stats = await run("stats", file, "--json");
  assert.deepEqual(json(stats).open, open);
  assert.match((await run("stats", file)).stdout, /compaction "c3" is open/);
  const dry = await run("repair", file, "--dry-run", "--json");
  assert.equal(dry.code, 0);
  assert.deepEqual(json(dry).open, open);
  assert.deepEqual(
    JSON.parse(dry.stdout).closers.map((e: { type: string; data: unknown }) => [
      e.type,
      e.data,
    ]),
    [
      ["compaction/end", { compactionId: "c3", error: { _tag: "Abandoned" } }],
      ["step/end", { turn: 0, step: 0 }],
      ["turn/end", { turn: 0, reason: { kind: "interrupted" } }],
    ],
  );
  assert.deepEqual(fs.readFileSync(file), before);
  assert.equal((await run("repair", file)).code, 0);
  const after = json(await run("verify", file, "--json"));
  assert.equal(after.open, undefined);
  assert.deepEqual(json(await run("stats", file, "--json")).open, {
    turns: [],
    compactions: [],
  });
  const again = await run("repair", file, "--dry-run");
  assert.match(again.stdout, /nothing to close/);
});

Deno.test("the view shows an open turn and an open compaction", async () => {
  const { session } = await write(midSummary);
  const html = Result.getOrThrow(renderSessionHtml(session));
  assert.match(html, /Turn 0 is still open/);
  assert.match(html, /Compaction <code>c3<\/code> is still open/);
  const closed = Result.getOrThrow(
    renderSessionHtml((await write(nested.slice(5))).session),
  );
  assert.doesNotMatch(closed, /still open/);
});
