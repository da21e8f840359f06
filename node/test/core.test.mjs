// Tests of the installed package's main entry point (`@palimpsest/session`)
// under Node: decode, fold and derive, with effect from npm.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Effect } from "effect";
import { deriveMessages, replay, Session, SessionSeq } from "@palimpsest/session";
import { decodeEvent } from "@palimpsest/session/schema";
import { surfaceNodes } from "@palimpsest/session/internal";
import { userMessage } from "./_events.mjs";

const user = (seq, extra) => userMessage(`u${seq}`, `message ${seq}`, { seq, time: 0, ...extra });

test("decodes, folds and derives under Node", async () => {
  const events = await Effect.runPromise(Effect.all([
    decodeEvent(user(0, { surfaceOp: "append" })),
    decodeEvent(user(1, { surfaceOp: "append" })),
    decodeEvent(user(2, {
      surfaceOp: { op: "replace", startSeq: 0, endSeq: 1 },
      sourceEventSeqs: [0, 1],
    })),
  ]));
  const surface = await Effect.runPromise(replay(events));
  assert.deepEqual(surfaceNodes(surface), [2]);
  assert.deepEqual(deriveMessages(surface).map((m) => m.id), ["u2"]);
});

test("reports a broken rule as a tagged error under Node", async () => {
  const tag = await Effect.runPromise(
    decodeEvent(user(0, {})).pipe(
      Effect.map(() => "decoded"),
      Effect.catchTag("SurfaceOpMissing", (e) => Effect.succeed(e._tag)),
    ),
  );
  assert.equal(tag, "SurfaceOpMissing");
});

test("appends drafts to a session under Node", async () => {
  const session = await Effect.runPromise(
    Session.append(Session.make({ id: "n", createdAt: 0, isSeeded: false }), {
      type: "turn/start",
      data: { turn: 0 },
    }),
  );
  assert.equal(Session.nextSeq(session), SessionSeq.make(1));
});
