/**
 * `PostgresStore` is a requirement of its own: a program that asks for it
 * does not type-check when only another store's layer is provided (before,
 * its identifier was `SessionStore` itself, so the memory layer satisfied
 * the type and the program died at run time with "Service not found").
 * `deno check` (and `deno test`, which type-checks) fails on this file if
 * the `@ts-expect-error` below has no error to expect.
 */
import assert from "node:assert/strict";
import { Effect, Exit, type Layer } from "effect";
import { layerMemoryStore, SessionStore } from "@palimpsest/session";
import {
  layerPostgresStore,
  PostgresStore,
} from "@palimpsest/session/postgres";

const usesPostgres = Effect.gen(function* () {
  const store = yield* PostgresStore;
  return yield* store.list();
});

Deno.test("PostgresStore is not provided by the memory layer, in the types and at run time", async () => {
  const onMemory = usesPostgres.pipe(Effect.provide(layerMemoryStore()));
  // @ts-expect-error: the memory layer does not provide PostgresStore.
  const runnable: Effect.Effect<unknown, unknown, never> = onMemory;
  const exit = await Effect.runPromiseExit(runnable);
  assert.ok(Exit.isFailure(exit));
  assert.notEqual(PostgresStore.key, SessionStore.key);
});

Deno.test("layerPostgresStore provides both SessionStore and PostgresStore", () => {
  // Type-level: a program needing both runs on the PostgreSQL layer alone.
  const both = Effect.gen(function* () {
    yield* SessionStore;
    return yield* usesPostgres;
  });
  const layer: Layer.Layer<SessionStore | PostgresStore, unknown> =
    layerPostgresStore({ url: "postgres://localhost/none" });
  const provided: Effect.Effect<ReadonlyArray<string>, unknown, never> = both
    .pipe(Effect.provide(layer));
  assert.ok(Effect.isEffect(provided));
});
