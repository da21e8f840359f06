/**
 * A rewind on a session opened from a checkpoint (holding only its
 * surface), through `store.update`, on the memory and JSONL stores: the
 * same session on both, and the checkpoint written before the rewind opens
 * after it to what a whole replay gives. (PostgreSQL: tests/postgres.)
 */
import assert from "node:assert/strict";
import { Effect } from "effect";
import { layerJsonlStore, layerMemoryStore } from "@palimpsest/session";
import {
  expectedStoredRewind,
  rewindThroughStore,
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
