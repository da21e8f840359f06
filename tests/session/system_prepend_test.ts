/**
 * `surfaceOp: "prepend"`: a system prompt given to a surface whose head is
 * not one goes before the head. Only a `system/message` may prepend
 * (`PrependNotSystemMessage`, event-local), and not while the head is
 * already a system prompt (`SystemHeadExists`, relational); once there,
 * the prepended head is protected like any system head.
 */
import { Ajv2020 } from "ajv/dist/2020.js";
import {
  applyEvent,
  checkTranscript,
  deriveMessages,
  Draft,
  emptySurface,
  type EventDraft,
  replay,
  Session,
  SessionStore,
  setSystemPrompt,
} from "@palimpsest/session";
import { decodeEvent } from "@palimpsest/session/schema";
import { surfaceNodes } from "@palimpsest/session/internal";
import { importSession } from "@palimpsest/session/import";
import { layerTempJsonlStore } from "@palimpsest/session/testing";
import { eventJsonSchema } from "@palimpsest/session/schema";
import { Effect, Result } from "effect";
import assert from "node:assert/strict";
import { thenFails } from "../_helpers/then.ts";
import { user as userLine } from "../_helpers/build.ts";

const user = (seq: number, extra: object = {}) => ({
  ...userLine(seq, { time: 0 }),
  ...extra,
});
const system = (seq: number, extra: object = { surfaceOp: "prepend" }) => ({
  type: "system/message",
  seq,
  time: 0,
  data: {
    turn: 0,
    step: 0,
    message: {
      id: `system-${seq}`,
      role: "system",
      content: [{ type: "text", text: `prompt ${seq}` }],
      source: { kind: "plugin", plugin: "system-prompt" },
    },
  },
  ...extra,
});

const decodeAll = (lines: ReadonlyArray<unknown>) =>
  Effect.runSync(Effect.forEach(lines, (line) => decodeEvent(line)));
const fold = (lines: ReadonlyArray<unknown>) =>
  Effect.runSync(replay(decodeAll(lines)));
const foldFails = (lines: ReadonlyArray<unknown>) =>
  Effect.runSync(Effect.flip(replay(decodeAll(lines))));

Deno.test("a prepended system/message goes before the head", () => {
  const surface = fold([user(0), user(1), system(2)]);
  assert.deepEqual(surfaceNodes(surface), [2, 0, 1]);
  assert.equal(surface.length, 3);
  assert.equal(surface.replacements, 0);
  assert.deepEqual(deriveMessages(surface).map((m) => m.id), [
    "system-2",
    "u0",
    "u1",
  ]);
  // Appends still go to the tail.
  assert.deepEqual(surfaceNodes(fold([user(0), system(1), user(2)])), [
    1,
    0,
    2,
  ]);
  // On an empty surface it is the only node.
  assert.deepEqual(surfaceNodes(fold([system(0)])), [0]);
});

Deno.test("folding a prepend incrementally equals folding it all at once", () => {
  const lines = [user(0), user(1), system(2), user(3)];
  const events = decodeAll(lines);
  const whole = Effect.runSync(replay(events));
  const part = Effect.runSync(replay(events.slice(0, 2)));
  const rest = Effect.runSync(replay(events.slice(2), part));
  assert.deepEqual(surfaceNodes(rest), surfaceNodes(whole));
  assert.deepEqual(deriveMessages(rest), deriveMessages(whole));
});

Deno.test("only a system/message may prepend", () => {
  const error = Effect.runSync(
    Effect.flip(decodeEvent(user(0, { surfaceOp: "prepend" }))),
  );
  thenFails(error, "PrependNotSystemMessage", {
    seq: 0,
    type: "user/message",
  });
  const other = Effect.runSync(
    Effect.flip(decodeEvent(user(0, { surfaceOp: "prepended" }))),
  );
  thenFails(other, "InvalidSurfaceOp");
});

Deno.test("a prepend over a system head is refused and changes nothing", () => {
  const error = foldFails([user(0), system(1), system(2)]);
  thenFails(error, "SystemHeadExists", { seq: 2, head: 1 });
  const appended = foldFails([
    system(0, { surfaceOp: "append" }),
    user(1),
    system(2),
  ]);
  thenFails(appended, "SystemHeadExists", { seq: 2, head: 0 });
  const before = fold([user(0), system(1)]);
  const [again] = decodeAll([system(2)]);
  assert.ok(again !== undefined);
  const exit = Effect.runSyncExit(applyEvent(before, again));
  assert.equal(exit._tag, "Failure");
  assert.deepEqual(surfaceNodes(before), [1, 0]);
});

Deno.test("a prepended head is protected and orders replacements", () => {
  const replace = (seq: number, startSeq: number, endSeq: number) =>
    user(seq, {
      surfaceOp: { op: "replace", startSeq, endSeq },
      sourceEventSeqs: [startSeq, endSeq].filter((s, i, a) =>
        a.indexOf(s) === i
      ),
    });
  // A compaction-like replacement from the prepended head is refused.
  thenFails(
    foldFails([user(0), user(1), system(2), replace(3, 2, 0)]),
    "SystemHeadProtected",
    { seq: 3, head: 2 },
  );
  // The prepended head stands before seq 0: the range 0..2 is inverted.
  thenFails(
    foldFails([user(0), user(1), system(2), replace(3, 0, 2)]),
    "ReplaceRangeInverted",
  );
  // A range after it is replaced as usual, and a system/message replaces it.
  const surface = fold([
    user(0),
    user(1),
    system(2),
    replace(3, 0, 1),
    system(4, {
      surfaceOp: { op: "replace", startSeq: 2, endSeq: 2 },
      sourceEventSeqs: [2],
    }),
  ]);
  assert.deepEqual(surfaceNodes(surface), [4, 3]);
});

Deno.test("a prepend round-trips through a session and the JSON Schema", () => {
  const events = decodeAll([user(0), system(1)]);
  const session = Effect.runSync(
    Session.fromEvents({ id: "s", createdAt: 0, isSeeded: false }, events),
  );
  const encoded = Result.getOrThrow(Session.encode(session));
  assert.deepEqual(encoded[1], system(1));
  const validate = new Ajv2020({ strict: false }).compile(eventJsonSchema());
  assert.equal(validate(system(1)), true);
  assert.equal(validate(user(0, { surfaceOp: "prepend" })), false);
  assert.equal(validate(user(0)), true);
  assert.deepEqual(surfaceNodes(emptySurface), []);
});

Deno.test("an imported Claude Code or pi session can be given a system prompt", async () => {
  for (
    const [from, file] of [
      ["claude-code", "tests/fixtures/import/claude-code/compact.jsonl"],
      ["pi", "tests/fixtures/import/pi/v1-compaction.jsonl"],
    ] as const
  ) {
    const imported = await Effect.runPromise(importSession(file, { from }));
    const before = deriveMessages(imported.session.surface);
    assert.notEqual(before[0]?.role, "system", from);
    const prompted = Effect.runSync(
      setSystemPrompt(imported.session, "You are careful."),
    );
    const after = deriveMessages(prompted.surface);
    assert.deepEqual(after[0]?.content, [{
      type: "text",
      text: "You are careful.",
    }]);
    assert.deepEqual(after.slice(1), before, from);
    assert.deepEqual(checkTranscript(after), [], from);
    // Replay of the encoded log gives the same surface.
    const replayed = Effect.runSync(
      replay(decodeAll(Result.getOrThrow(Session.encode(prompted)))),
    );
    assert.deepEqual(surfaceNodes(replayed), surfaceNodes(prompted.surface));
  }
});

Deno.test("a prepended prompt is stored and read back by the JSONL store", async () => {
  const { written, read } = await Effect.runPromise(
    Effect.gen(function* () {
      const store = yield* SessionStore;
      const written = yield* Effect.scoped(Effect.gen(function* () {
        const handle = yield* store.create({
          id: "p",
          createdAt: 0,
          isSeeded: false,
        });
        yield* store.append(handle, [Draft.user("hello", { id: "u0" })]);
        const updated = yield* store.update(
          handle,
          (s) => setSystemPrompt(s, "Be brief."),
        );
        return updated.session;
      }));
      const read = yield* Effect.scoped(
        Effect.map(store.open("p"), (handle) => handle.session),
      );
      return { written, read };
    }).pipe(Effect.provide(layerTempJsonlStore())),
  );
  assert.deepEqual(surfaceNodes(read.surface), [1, 0]);
  assert.deepEqual(surfaceNodes(read.surface), surfaceNodes(written.surface));
  assert.deepEqual(
    Result.getOrThrow(Session.encode(read)),
    Result.getOrThrow(Session.encode(written)),
  );
});

Deno.test("only a system/message draft may prepend, at compile time too", () => {
  const message = {
    id: "u",
    role: "user" as const,
    content: [{ type: "text" as const, text: "hi" }],
    source: { kind: "user" as const },
  };
  const ok: EventDraft = {
    ...Draft.system("", { id: "s", plugin: "p" }),
    surfaceOp: "prepend",
  };
  // @ts-expect-error: a user message never prepends.
  const refused: EventDraft = {
    type: "user/message",
    surfaceOp: "prepend",
    data: message,
  };
  assert.equal(ok.type, "system/message");
  const exit = Effect.runSyncExit(
    Effect.flip(Session.append(
      Session.make({ id: "s", createdAt: 0, isSeeded: false }),
      refused,
    )),
  );
  assert.ok(exit._tag === "Success");
  thenFails(exit.value, "PrependNotSystemMessage");
});
