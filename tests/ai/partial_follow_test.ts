/**
 * A follower in another process than the turn's: connecting in the middle
 * of an answer, it gets the partial batches already written, then the rest
 * as they are written, then the settled answer (JSONL and PostgreSQL).
 */
import {
  layerJsonlStore,
  type SessionEvent,
  SessionStore,
} from "@palimpsest/session";
import { layerPostgresStore } from "@palimpsest/session/postgres";
import { Effect, type Layer, Stream } from "effect";
import assert from "node:assert/strict";
import { tempDir } from "../_helpers/store.ts";
import { postgresTest } from "../_helpers/postgres.ts";
import { isPrefixOf, said } from "../_helpers/partial_stream.ts";
import { startAgent } from "../_helpers/partial_child.ts";

/**
 * Waits until the session holds a partial batch, then follows it from seq
 * 0 to its `turn/end`: the batches held when it connected, and the events
 * in the order the follower got them.
 */
const followMidAnswer = (store: Layer.Layer<SessionStore, unknown>) =>
  Effect.runPromise(
    Effect.gen(function* () {
      const sessions = yield* SessionStore;
      let held: ReadonlyArray<SessionEvent> = [];
      for (let tries = 0; tries < 500; tries++) {
        held = yield* Effect.scoped(
          Effect.flatMap(
            sessions.open("s", { mode: "read" }),
            (h) => sessions.events(h),
          ),
        );
        if (held.some((e) => e.type === "assistant/partial")) break;
        yield* Effect.sleep(5);
      }
      const followed = yield* sessions.follow("s").pipe(
        Stream.takeUntil((e) => e.type === "turn/end"),
        Stream.runCollect,
      );
      return { held, followed };
    }).pipe(Effect.provide(store)),
  );

const check = (
  held: ReadonlyArray<SessionEvent>,
  followed: ReadonlyArray<SessionEvent>,
) => {
  const heldBatches = held.filter((e) => e.type === "assistant/partial");
  assert.ok(heldBatches.length > 0);
  // What had streamed when the follower connected comes first, unchanged.
  assert.deepEqual(followed.slice(0, held.length), held);
  // Then the rest of the answer, batch by batch, before it settles.
  const first = followed.find((e) => e.type === "assistant/message");
  assert.ok(first?.type === "assistant/message");
  const batches = followed.filter((e) =>
    e.type === "assistant/partial" && e.seq < first.seq
  );
  assert.ok(
    batches.length > heldBatches.length,
    `${batches.length} batches, ${heldBatches.length} held`,
  );
  const streamed = said(
    batches.flatMap((e) =>
      e.type === "assistant/partial" ? e.data.stream.map((r) => r.chunk) : []
    ),
  );
  const whole = said(first.data.stream.map((r) => r.chunk));
  assert.ok(isPrefixOf(streamed, whole));
  // (How much of it streamed before it settled depends on the machine's
  // pace: the batches are a prefix, and more of them came live.)
  assert.ok(streamed.length > 0);
  assert.equal(followed.at(-1)?.type, "turn/end");
};

Deno.test("a JSONL follower in another process gets a partial answer mid-stream, then the rest", async () => {
  const root = tempDir("palimpsest-follow-");
  const agent = await startAgent(root, "s", "created");
  const { held, followed } = await followMidAnswer(layerJsonlStore({ root }));
  assert.equal(await agent.done, 0);
  check(held, followed);
});

postgresTest(
  "a PostgreSQL follower in another process gets a partial answer mid-stream, then the rest",
  async (url) => {
    const agent = await startAgent(url, "s", "created");
    const { held, followed } = await followMidAnswer(
      layerPostgresStore({ url, maxConnections: 2 }),
    );
    assert.equal(await agent.done, 0);
    check(held, followed);
  },
);
