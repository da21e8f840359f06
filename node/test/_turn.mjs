// A turn on a new session, shared by the Node tests of the turn loop (not a
// test file itself: node's runner picks only `*.test.mjs`).
import { Effect, Layer } from "effect";
import { SessionStore } from "@palimpsest/session";
import { runTurn } from "@palimpsest/session/ai";

/**
 * Creates session `id`, runs one turn of `options` on it (its `toolkit`, when
 * given, is the toolkit whose handlers `layers` provide) and opens the
 * session again: the turn's outcome and the session as read back.
 */
export const turnAndReopen = (id, { toolkit, ...options }, ...layers) => {
  const program = Effect.gen(function* () {
    const store = yield* SessionStore;
    const handle = yield* store.create({ id, createdAt: 0, isSeeded: false });
    const outcome = yield* runTurn({
      ...options,
      handle,
      ...(toolkit === undefined ? {} : { toolkit: yield* toolkit }),
    });
    const reopened = yield* store.open(id);
    return { outcome, session: reopened.session };
  });
  return Effect.runPromise(
    Effect.scoped(program).pipe(Effect.provide(Layer.mergeAll(...layers))),
  );
};
