/**
 * A rewind on PostgreSQL: the program of tests/history/rewind_store_test.ts
 * (a session opened from a checkpoint, rewound with `store.update`, its
 * checkpoint from before the rewind opened after it) gives the session the
 * memory store gives.
 */
import assert from "node:assert/strict";
import { Effect } from "effect";
import { layerMemoryStore } from "@palimpsest/session";
import { layerPostgresStore } from "@palimpsest/session/postgres";
import { postgresTest } from "../_helpers/postgres.ts";
import {
  expectedStoredRewind,
  rewindThroughStore,
  surfaceOnly,
} from "../_helpers/rewind_stored.ts";

postgresTest(
  "a rewind on PostgreSQL gives the session the memory store gives",
  async (url) => {
    const postgres = await Effect.runPromise(
      Effect.scoped(rewindThroughStore).pipe(
        Effect.provide(layerPostgresStore({ url, checkpoints: surfaceOnly })),
      ),
    );
    expectedStoredRewind(postgres);
    const memory = await Effect.runPromise(
      Effect.scoped(rewindThroughStore).pipe(
        Effect.provide(layerMemoryStore({ checkpoints: surfaceOnly })),
      ),
    );
    assert.deepEqual(postgres, memory);
  },
);
