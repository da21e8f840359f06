// Event builders shared by the Node tests (not a test file itself: node's
// runner picks only `*.test.mjs`): a text part, a user message, and a list of
// events written as one new session through a store.
import { Effect } from "effect";

/** The content of a message that says `t`. */
export const text = (t) => [{ type: "text", text: t }];

/** A `user/message` event `id` saying `t`, with the envelope fields in `extra`. */
export const userMessage = (id, t, extra = {}) => ({
  type: "user/message",
  ...extra,
  data: { id, role: "user", content: text(t), source: { kind: "user" } },
});

/** Creates session `id` in `store`, appends `events` and closes it. */
export const writeSession = (store, id, events) =>
  Effect.gen(function* () {
    const writer = yield* store.create({ id, createdAt: 0, isSeeded: false });
    yield* store.append(writer, events);
    yield* store.close(writer);
  });
