import { Effect } from "effect";
import assert from "node:assert/strict";
import {
  Draft,
  type EventDraft,
  makeMemoryStore,
  Session,
  sessionMetadata,
  setMetadata,
  setTitle,
  tagSession,
  untagSession,
} from "@palimpsest/session";
import { eventJsonSchema } from "@palimpsest/session/schema";
import { checkLog } from "../_helpers/reference_checker.ts";

const header = { id: "m", createdAt: 0, isSeeded: false };

const turn = (n: number): ReadonlyArray<EventDraft> => [
  { type: "turn/start", data: { turn: n } },
  Draft.user(`hello ${n}`, { id: `u${n}` }),
  { type: "turn/end", data: { turn: n, reason: { kind: "completed" } } },
];

Deno.test("session metadata: the last write wins, labels and values merge by key", () => {
  const session = Effect.runSync(Effect.gen(function* () {
    let s = Session.make(header);
    s = yield* setTitle(s, "first");
    s = yield* setMetadata(s, {
      labels: { team: "a", env: "ci" },
      values: { n: 1, keep: true },
      cwd: "/a",
    });
    s = yield* tagSession(s, ["x", "y"]);
    s = yield* setMetadata(s, {
      labels: { team: null },
      values: { n: 2, keep: null },
      cwd: null,
    });
    s = yield* untagSession(s, ["x"]);
    return yield* setTitle(s, "second");
  }));
  assert.deepEqual(sessionMetadata(session), {
    title: "second",
    tags: ["y"],
    labels: { env: "ci" },
    cwd: undefined,
    values: { n: 2 },
  });
  assert.deepEqual(sessionMetadata(Session.make(header)).tags, []);
});

Deno.test("session metadata events are ignorable log-only events the reference checker and the JSON Schema know", () => {
  const session = Effect.runSync(setTitle(Session.make(header), "t"));
  const events = Session.events(session);
  assert.ok(events._tag === "Success");
  const [event] = events.success;
  assert.equal(event?.type, "session/metadata");
  assert.equal(event?.ignorable, true);
  assert.equal(checkLog(events.success).ok, true);
  const defs = JSON.stringify(eventJsonSchema());
  assert.ok(defs.includes("session/metadata"));
});

Deno.test("session metadata is kept by checkpoints: a session opened from one reads what the events before it set", async () => {
  const { store, checkpoints } = Effect.runSync(makeMemoryStore());
  const opened = await Effect.runPromise(Effect.scoped(Effect.gen(function* () {
    const writer = yield* store.create(header);
    yield* store.update(writer, (s) => setTitle(s, "kept"));
    yield* store.update(writer, (s) => tagSession(s, ["a"]));
    for (let n = 0; n < 5; n++) yield* store.append(writer, turn(n));
    yield* store.update(writer, (s) => setMetadata(s, { labels: { k: "v" } }));
    yield* store.append(writer, turn(5));
    yield* store.checkpoint(writer);
    const expected = sessionMetadata(writer.session);
    const reader = yield* store.open("m");
    return { expected, reader };
  })));
  assert.ok(checkpoints.get("m") !== undefined);
  assert.equal(opened.reader.report.checkpoint, 21);
  // The reader holds none of the metadata events: they come from the
  // checkpoint's prior.
  assert.ok(Session.heldFrom(opened.reader.session) > 19);
  assert.deepEqual(sessionMetadata(opened.reader.session), opened.expected);
  assert.deepEqual(opened.expected.tags, ["a"]);
  assert.equal(opened.expected.title, "kept");
  assert.deepEqual(opened.expected.labels, { k: "v" });
});
