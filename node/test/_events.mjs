// Event builders shared by the Node tests (not a test file itself: node's
// runner picks only `*.test.mjs`): a text part, a user and an assistant
// message, and a list of events written as one new session through a store.
import * as path from "node:path";
import { Effect } from "effect";
import { layerJsonlStore, SessionStore } from "@palimpsest/session";

/** The content of a message that says `t`. */
export const text = (t) => [{ type: "text", text: t }];

/** A `user/message` event `id` saying `t`, with the envelope fields in `extra`. */
export const userMessage = (id, t, extra = {}) => ({
  type: "user/message",
  ...extra,
  data: { id, role: "user", content: text(t), source: { kind: "user" } },
});

/** An `assistant/message` event `id` of step 0 of turn 0, from model p/m. */
export const assistantMessage = (id, content) => ({
  type: "assistant/message",
  surfaceOp: "append",
  data: {
    turn: 0,
    step: 0,
    stream: [],
    message: { id, role: "assistant", content, source: { kind: "model", provider: "p", model: "m" } },
  },
});

/** Creates session `id` in `store`, appends `events` and closes it. */
export const writeSession = (store, id, events) =>
  Effect.gen(function* () {
    const writer = yield* store.create({ id, createdAt: 0, isSeeded: false });
    yield* store.append(writer, events);
    yield* store.close(writer);
  });

/** Writes `events` as session `id` of the JSONL store in `root`; resolves to its file. */
export const writeJsonlSession = async (root, id, events) => {
  await Effect.runPromise(
    Effect.scoped(Effect.flatMap(SessionStore, (store) => writeSession(store, id, events)))
      .pipe(Effect.provide(layerJsonlStore({ root }))),
  );
  return path.join(root, `${id}.jsonl`);
};
