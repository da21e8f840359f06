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
  SessionStore,
} from "@palimpsest/session";
import { Effect, Layer } from "effect";
import {
  checkpointConformance,
  storeConformance,
} from "@palimpsest/session/testing";
import { viewReaders } from "../_helpers/checkpoints.ts";

storeConformance({ name: "layerMemoryStore", layer: () => layerMemoryStore() });

checkpointConformance({
  readers: viewReaders,
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
