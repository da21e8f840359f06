/**
 * A rewind on a session opened from a checkpoint (holding only its
 * surface), through `store.update`, on the memory and JSONL stores: the
 * same session on both, and the checkpoint written before the rewind opens
 * after it to what a whole replay gives. (PostgreSQL: tests/postgres.)
 */
import assert from "node:assert/strict";
import { Effect } from "effect";
import {
  Draft,
  layerJsonlStore,
  layerMemoryStore,
  rewind,
} from "@palimpsest/session";
import { surfaceNodes } from "@palimpsest/session/internal";
import {
  expectedStoredRewind,
  rewindThroughStore,
  storeTwoTurns,
  surfaceOnly,
} from "../_helpers/rewind_stored.ts";
import { tempDir } from "../_helpers/store.ts";

Deno.test("a rewind through update on a session opened from a checkpoint reads what it needs, on memory and JSONL alike", async () => {
  const memory = await Effect.runPromise(
    Effect.scoped(rewindThroughStore).pipe(
      Effect.provide(layerMemoryStore({ checkpoints: surfaceOnly })),
    ),
  );
  expectedStoredRewind(memory);
  const jsonl = await Effect.runPromise(
    Effect.scoped(rewindThroughStore).pipe(
      Effect.provide(
        layerJsonlStore({ root: tempDir(), checkpoints: surfaceOnly }),
      ),
    ),
  );
  expectedStoredRewind(jsonl);
  assert.deepEqual(memory, jsonl);
});

Deno.test("a rewind through update on a session a store opened whole (a short log) works on memory and JSONL", async () => {
  const program = Effect.gen(function* () {
    const { store, writer } = yield* storeTwoTurns("s");
    yield* store.close(writer);
    const handle = yield* store.open("s", { mode: "write" });
    const { session } = yield* store.update(
      handle,
      (s) => rewind(s, { to: 3, event: Draft.user("edited") }),
    );
    return surfaceNodes(session.surface);
  });
  for (
    const layer of [
      layerMemoryStore(),
      layerJsonlStore({ root: tempDir() }),
    ]
  ) {
    assert.deepEqual(
      await Effect.runPromise(
        Effect.scoped(program).pipe(Effect.provide(layer)),
      ),
      [1, 2, 8],
    );
  }
});
