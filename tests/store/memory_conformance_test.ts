/**
 * The store conformance suite against the in-memory layer. It lives in one
 * process, so the tests with writers in other processes do not apply; each
 * test runs against one fresh store.
 *
 * @module
 */
import {
  layerMemoryStore,
  makeMemoryStore,
  type Session,
  SessionStore,
} from "@palimpsest/session";
import { Effect, Layer, Result } from "effect";
import {
  checkpointConformance,
  storeConformance,
} from "@palimpsest/session/testing";
import { renderSessionHtml } from "@palimpsest/session/view";

storeConformance({ name: "layerMemoryStore", layer: () => layerMemoryStore() });

// The HTML view, asked of a session opened from a checkpoint as of the whole.
const readers = {
  view: (session: Session) => Result.getOrThrow(renderSessionHtml(session)),
};
checkpointConformance({
  readers,
  name: "layerMemoryStore",
  make: (checkpoints) => {
    const made = Effect.runSync(makeMemoryStore({ checkpoints }));
    return {
      layer: Layer.succeed(SessionStore, made.store),
      get: (id) => Promise.resolve(made.checkpoints.get(id)),
      set: (id, text) => Promise.resolve(made.checkpoints.set(id, text)),
    };
  },
});
