/**
 * Seqs given by hand: the public inputs take a plain non-negative integer
 * and refuse anything else with `InvalidSessionSeq`; outputs stay branded.
 * `store.update` takes every operation the docs list, whatever it returns
 * beside the session. Most of this file is checked by the compiler.
 */
import {
  compact,
  Draft,
  fork,
  layerMemoryStore,
  lineage,
  pruneLargeToolResults,
  pruneToolResult,
  Session,
  type SessionSeq,
  SessionStore,
  setSystemPrompt,
  shadowedBy,
  surfaceAt,
} from "@palimpsest/session";
import type { HeldReadError } from "@palimpsest/session/schema";
import { Effect, Exit, Result } from "effect";
import assert from "node:assert/strict";
import { thenFails } from "../_helpers/then.ts";
import { toolResultMessageDraft } from "../_helpers/build.ts";

const base = Effect.runSync(
  Session.appendAll(Session.make({ id: "s", createdAt: 0, isSeeded: false }), [
    Draft.user("a", { id: "a" }),
    Draft.user("b", { id: "b" }),
    Draft.user("c", { id: "c" }),
  ]),
);

Deno.test("public seq inputs take plain integers; outputs stay branded", () => {
  assert.deepEqual(
    Result.getOrThrow(Session.events(base, 1)).map((e) => e.seq),
    [1, 2],
  );
  assert.equal(
    Result.getOrThrow(Session.eventAt(base, 2))?.type,
    "user/message",
  );
  assert.equal(Result.getOrThrow(lineage(base, 0))?.seq, 0);
  assert.equal(Result.getOrThrow(shadowedBy(base, 0)), undefined);
  assert.ok(Result.getOrThrow(surfaceAt(base, 1)) !== undefined);
  const next: SessionSeq = Session.nextSeq(base);
  const event = Result.getOrThrow(Session.events(base, 0))[0];
  const seq: SessionSeq | undefined = event?.seq;
  assert.equal(next, 3);
  assert.equal(seq, 0);
  // @ts-expect-error: a plain number is still not a SessionSeq.
  const plain: SessionSeq = 3;
  assert.equal(plain, 3);
});

Deno.test("the synchronous reads return InvalidSessionSeq for a seq that is not a non-negative integer", () => {
  for (const bad of [-1, 1.5, Number.NaN, -0, 2 ** 60]) {
    for (
      const read of [
        () => Session.events(base, bad),
        () => Session.eventAt(base, bad),
        () => lineage(base, bad),
        () => shadowedBy(base, bad),
        () => surfaceAt(base, bad),
      ]
    ) {
      const result: Result.Result<unknown, HeldReadError> = read();
      assert.ok(Result.isFailure(result));
      thenFails(result.failure, "InvalidSessionSeq");
      assert.equal(Object.is(Reflect.get(result.failure, "value"), bad), true);
    }
  }
});

Deno.test("the operations fail with InvalidSessionSeq on a bad seq and change nothing", () => {
  const refused = <E extends { readonly _tag: string }>(
    op: Effect.Effect<unknown, E>,
  ) => {
    const exit = Effect.runSyncExit(Effect.flip(op));
    assert.ok(Exit.isSuccess(exit));
    thenFails(exit.value, "InvalidSessionSeq");
  };
  refused(fork(base, -1));
  refused(pruneToolResult(base, 0.5, []));
  refused(
    compact(base, { startSeq: -2, endSeq: 1, summary: "s", compactionId: "c" }),
  );
  refused(
    compact(base, {
      startSeq: 0,
      endSeq: 1.5,
      summary: "s",
      compactionId: "c",
    }),
  );
  const ok = Effect.runSync(
    compact(base, {
      startSeq: 0,
      endSeq: 1,
      summary: "a b",
      compactionId: "c",
    }),
  );
  assert.equal(ok.surface.replacements, 1);
  assert.equal(Effect.runSync(fork(base, 1)).header.isSeeded, true);
});

Deno.test("store.update takes operations that return a result beside the session", async () => {
  const big = "x".repeat(5_000);
  const { pruned, saved, system } = await Effect.runPromise(
    Effect.scoped(Effect.gen(function* () {
      const store = yield* SessionStore;
      const handle = yield* store.create({
        id: "u",
        createdAt: 0,
        isSeeded: false,
      });
      const system = yield* store.update(
        handle,
        (s) => setSystemPrompt(s, "Be brief."),
      );
      yield* store.append(handle, [
        toolResultMessageDraft(0, 0, "r", {
          type: "tool-result",
          toolCallId: "c",
          content: [{ type: "text", text: big }],
        }),
      ]);
      const pruned = yield* store.update(
        handle,
        (s) =>
          pruneLargeToolResults(s, {
            thresholdChars: 1_000,
            headChars: 10,
            tailChars: 10,
          }),
      );
      return {
        pruned: pruned.result.pruned.map((p) => p.seq),
        saved: pruned.events.map((e) => e.type),
        system: system.result === system.session,
      };
    })).pipe(Effect.provide(layerMemoryStore())),
  );
  assert.deepEqual(pruned, [1]);
  assert.deepEqual(saved, ["compaction/prune", "tool/result"]);
  assert.equal(system, true);
});
