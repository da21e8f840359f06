/**
 * The store conformance suite's writes and reads: no-clobber create (also
 * from a whole session), all-or-nothing batches, what `append` and `update`
 * store, one writer per session in this process, dense seqs under
 * concurrent appends, bad ids refused, list and stat, and readers that see
 * a snapshot of stored batches.
 *
 * @internal
 * @module
 */
import assert from "node:assert/strict";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Fiber from "effect/Fiber";
import * as Result from "effect/Result";
import * as Stream from "effect/Stream";
import { compact } from "../history/compact.ts";
import { fork } from "../history/fork.ts";
import { SessionSeq } from "../core/seq.ts";
import { Session } from "../session/session.ts";
import { SessionStore } from "../store/store.ts";
import {
  drafts,
  failureOf,
  header,
  range,
  seqsOf,
  type Suite,
  thenFails,
  TURN,
  turnBatches,
} from "./conformance_kit.ts";

/** Registers the write and read tests on `suite`. */
export const writeTests = (suite: Suite): void => {
  const { test, run, fresh, assertNothingHeld, seeded, writeSeeded, readAll } =
    suite;

  test(
    `create never replaces a stored session`,
    async () => {
      const id = fresh("clobber");
      const [second, events] = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* seeded(id);
        const second = yield* Effect.exit(
          Effect.scoped(store.create(header(id))),
        );
        return [second, yield* readAll(id)] as const;
      }));
      thenFails(failureOf(second), "SessionAlreadyExists", { id });
      assert.equal(events.length, TURN);
      assertNothingHeld("after create");
    },
  );

  test(
    `create stores a whole session (a fork)`,
    async () => {
      const parentId = fresh("parent");
      const childId = fresh("child");
      const [forked, events] = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* seeded(parentId);
        const parent = (yield* Effect.scoped(store.open(parentId))).session;
        const child = yield* fork(parent, undefined, { id: childId });
        yield* Effect.scoped(store.create(child));
        return [child, yield* readAll(childId)] as const;
      }));
      assert.deepEqual(events, Result.getOrThrow(Session.events(forked)));
    },
  );

  test(
    `a batch is all or nothing`,
    async () => {
      const id = fresh("batch");
      const result = await run(
        writeSeeded(id, 1, (writer, store) =>
          Effect.gen(function* () {
            const follower = yield* Effect.forkChild(
              Stream.runCollect(
                Stream.take(store.follow(id, { fromSeq: TURN }), 1),
              ),
            );
            const before = writer.session;
            const refused = yield* Effect.exit(store.append(writer, [
              drafts.user("ok", "fine"),
              // A replacement of seq 0 (turn/start, never on the surface):
              // the fold refuses it after the first draft was accepted.
              {
                type: "user/message",
                surfaceOp: {
                  op: "replace",
                  startSeq: SessionSeq.make(0),
                  endSeq: SessionSeq.make(0),
                },
                sourceEventSeqs: [SessionSeq.make(0)],
                data: {
                  id: "bad",
                  role: "user",
                  content: [],
                  source: { kind: "user" },
                },
              },
            ]));
            const unchanged = writer.session === before;
            const reader = yield* readAll(id);
            const stored = yield* store.append(writer, [
              drafts.user("next", "x"),
            ]);
            const followed = yield* Fiber.join(follower);
            return { refused, unchanged, reader, stored, followed };
          })),
      );
      thenFails(failureOf(result.refused), "ReplaceStartNotOnSurface");
      assert.ok(result.unchanged);
      assert.equal(result.reader.length, TURN);
      assert.deepEqual(seqsOf(result.stored.events), [TURN]);
      assert.deepEqual(
        result.followed.map((e) => [e.seq, e.type]),
        [[TURN, "user/message"]],
      );
    },
  );

  test(
    `a compaction over a call no result answered is refused, and nothing is stored`,
    async () => {
      const id = fresh("unanswered");
      const result = await run(
        writeSeeded(id, 1, (writer, store) =>
          Effect.gen(function* () {
            const { events } = yield* store.append(writer, [
              drafts.assistant("open", "", ["c-open"]),
            ]);
            const call = events[0]?.seq ?? SessionSeq.make(0);
            const refused = yield* Effect.exit(
              store.update(writer, (session) =>
                compact(session, {
                  startSeq: call,
                  endSeq: call,
                  summary: "s",
                  compactionId: "k",
                })),
            );
            // Once answered, the call compacts with its result.
            const answered = yield* store.append(writer, [
              drafts.toolResult("c-open", "done"),
            ]);
            const result = answered.events[0]?.seq ?? call;
            const compacted = yield* store.update(writer, (session) =>
              compact(session, {
                startSeq: call,
                endSeq: result,
                summary: "s",
                compactionId: "k",
              }));
            return { call, refused, compacted, reader: yield* readAll(id) };
          })),
      );
      thenFails(failureOf(result.refused), "ReplaceShadowsUnansweredCall", {
        callSeq: result.call,
        callIds: ["c-open"],
      });
      // The refused batch left nothing: the result came right after the call.
      assert.deepEqual(
        result.reader.slice(TURN).map((e) => e.type),
        [
          "assistant/message",
          "tool/result",
          "compaction/start",
          "compaction/summary",
          "user/message",
          "compaction/end",
        ],
      );
      assert.equal(result.compacted.events.length, 4);
    },
  );

  test(
    `a stored batch is returned and seen by a new reader`,
    async () => {
      const id = fresh("durable");
      const { stored, events } = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        const writer = yield* store.create(header(id));
        const stored = yield* store.append(writer, turnBatches(0)[0] ?? []);
        return { stored, events: yield* readAll(id) };
      }));
      assert.deepEqual(seqsOf(stored.events), [0, 1, 2]);
      assert.deepEqual(events, stored.events);
      assert.deepEqual(
        Result.getOrThrow(Session.events(stored.session)),
        stored.events,
      );
    },
  );

  test(
    `update stores exactly what a history operation appended`,
    async () => {
      const id = fresh("update");
      const other = fresh("other");
      const { compacted, events, foreign } = await run(
        writeSeeded(id, 2, (writer, store) =>
          Effect.gen(function* () {
            const before = Session.nextSeq(writer.session);
            const compacted = yield* store.update(writer, (s) =>
              compact(s, {
                startSeq: SessionSeq.make(2),
                endSeq: SessionSeq.make(5),
                summary: "earlier",
                compactionId: "c1",
              }));
            assert.equal(compacted.events[0]?.seq, before);
            const foreign = yield* Effect.exit(
              store.update(
                writer,
                () => Effect.succeed(Session.make(header(other))),
              ),
            );
            return { compacted, events: yield* readAll(id), foreign };
          })),
      );
      assert.deepEqual(
        compacted.events.map((e) => e.type),
        [
          "compaction/start",
          "compaction/summary",
          "user/message",
          "compaction/end",
        ],
      );
      assert.deepEqual(events.slice(-4), compacted.events);
      thenFails(failureOf(foreign), "NotAnAppend");
    },
  );

  test(
    `one writer per session in this process`,
    async () => {
      const id = fresh("writer");
      const result = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* seeded(id);
        const second = yield* Effect.scoped(Effect.gen(function* () {
          yield* store.open(id, { mode: "write" });
          const second = yield* Effect.exit(
            Effect.scoped(store.open(id, { mode: "write" })),
          );
          const reader = yield* Effect.exit(Effect.scoped(store.open(id)));
          const stat = yield* store.stat(id);
          return { second, reader, locked: stat.locked };
        }));
        const after = yield* Effect.exit(
          Effect.scoped(store.open(id, { mode: "write" })),
        );
        const stat = yield* store.stat(id);
        return { ...second, after, unlocked: !stat.locked };
      }));
      thenFails(failureOf(result.second), "SessionLocked", { id });
      assert.ok(Exit.isSuccess(result.reader));
      assert.ok(result.locked);
      assert.ok(Exit.isSuccess(result.after));
      assert.ok(result.unlocked);
      assertNothingHeld("after the writers");
    },
  );

  test(
    `seqs stay dense under concurrent appends`,
    async () => {
      const id = fresh("dense");
      const { results, events } = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        const writer = yield* store.create(header(id));
        const results = yield* Effect.forEach(
          range(0, 20),
          (i) =>
            Effect.forEach(
              range(0, 5),
              (j) =>
                store.append(writer, [
                  { type: "turn/start", data: { turn: i * 100 + j } },
                  {
                    type: "turn/end",
                    data: { turn: i * 100 + j, reason: { kind: "completed" } },
                  },
                ]),
            ),
          { concurrency: "unbounded" },
        );
        return { results, events: yield* readAll(id) };
      }));
      const assigned = results.flat().flatMap((r) => seqsOf(r.events)).sort(
        (a, b) => a - b,
      );
      assert.deepEqual(assigned, range(0, 200));
      assert.deepEqual(seqsOf(events), range(0, 200));
    },
  );

  test(
    `bad ids are refused`,
    async () => {
      const exits = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        const all: ReadonlyArray<
          Exit.Exit<unknown, { readonly _tag: string }>
        > = [
          yield* Effect.exit(Effect.scoped(store.create(header("")))),
          yield* Effect.exit(Effect.scoped(store.open(""))),
          yield* Effect.exit(Effect.scoped(store.open("", { mode: "write" }))),
          yield* Effect.exit(store.withSession("", () => Effect.void)),
          yield* Effect.exit(store.stat("")),
          yield* Effect.exit(Stream.runCollect(store.follow(""))),
          yield* Effect.exit(Effect.scoped(store.create(header("\uD800")))),
        ];
        return all;
      }));
      for (const exit of exits) {
        thenFails(failureOf(exit), "InvalidSessionId");
      }
    },
  );

  test(
    `list and stat name stored sessions`,
    async () => {
      const id = fresh("listed");
      const [ids, stat, missing] = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* seeded(id);
        return [
          yield* store.list(),
          yield* store.stat(id),
          yield* Effect.exit(store.stat(fresh("missing"))),
        ] as const;
      }));
      assert.ok(ids.includes(id));
      assert.equal(stat.id, id);
      assert.ok(stat.bytes > 0);
      assert.equal(stat.locked, false);
      thenFails(failureOf(missing), "SessionNotFound");
    },
  );

  test(
    `readers see a snapshot of stored batches`,
    async () => {
      const id = fresh("snapshot");
      const { early, late } = await run(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* seeded(id);
        const early = yield* store.open(id);
        yield* store.withSession(
          id,
          (w) => store.append(w, [drafts.user("x", "x")]),
        );
        const late = yield* store.open(id);
        return { early, late };
      }));
      assert.equal(Session.nextSeq(early.session), TURN);
      assert.equal(Session.nextSeq(late.session), TURN + 1);
    },
  );
};
