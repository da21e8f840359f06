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
  storeTwoTurns,
  surfaceOnly,
} from "../_helpers/rewind_stored.ts";
import { cliInProcess } from "../cli/_cli.ts";

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

postgresTest(
  "palimpsest rewind and branches on a session in PostgreSQL",
  async (url) => {
    await Effect.runPromise(
      Effect.scoped(storeTwoTurns("r")).pipe(
        Effect.provide(layerPostgresStore({ url })),
      ),
    );
    const at = new URL(url);
    at.searchParams.set("session", "r");
    const address = at.toString();
    const rewound = await cliInProcess(
      "rewind",
      address,
      "--to",
      "3",
      "--text",
      "edited",
      "--json",
    );
    assert.equal(rewound.code, 0, rewound.stderr);
    assert.deepEqual(JSON.parse(rewound.stdout).takenOff, [5, 6]);
    const listed = await cliInProcess("branches", address, "--json");
    assert.deepEqual(
      JSON.parse(listed.stdout).branches.map((b: { current: boolean }) =>
        b.current
      ),
      [false, true],
    );
  },
);
