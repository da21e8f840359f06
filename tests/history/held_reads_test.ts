/**
 * A session opened from a checkpoint holds its surface and its latest
 * events. Every public read that needs an older event returns
 * `EventsNotHeld` as a value (a `Result` or an `Effect` failure), never a
 * throw, and `store.withHistory` turns that failure into a read of the
 * older events.
 */
import {
  compact,
  diffSurfaces,
  Draft,
  fork,
  layerMemoryStore,
  lineage,
  Session,
  SessionStore,
  shadowedBy,
  surfaceAt,
} from "@palimpsest/session";
import {
  renderSessionHtml,
  writeSessionHtml,
  writeSessionHtmlFile,
} from "@palimpsest/session/view";
import { Effect, Exit, Result } from "effect";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/**
 * Given a log of two messages compacted into a summary (seq 4) and a
 * checkpoint after it, the reader opened from the checkpoint and the
 * whole session, side by side.
 */
const opened = () =>
  Effect.runSync(
    Effect.scoped(Effect.gen(function* () {
      const store = yield* SessionStore;
      yield* Effect.scoped(Effect.gen(function* () {
        const writer = yield* store.create({
          id: "chat",
          createdAt: 0,
          isSeeded: false,
        });
        yield* store.append(writer, [
          Draft.user("a", { id: "a" }),
          Draft.user("b", { id: "b" }),
        ]);
        yield* store.update(writer, (s) =>
          compact(s, {
            startSeq: 0,
            endSeq: 1,
            summary: "a and b",
            compactionId: "c1",
          }));
        yield* store.checkpoint(writer);
      }));
      const reader = yield* store.open("chat");
      const whole = yield* store.open("chat", { wholeLog: true });
      const viaHistory = yield* store.withHistory(
        reader,
        (session) =>
          Effect.gen(function* () {
            const tree = yield* Effect.fromResult(lineage(session, 4));
            const by = yield* Effect.fromResult(shadowedBy(session, 0));
            const page = yield* Effect.fromResult(renderSessionHtml(session));
            const child = yield* fork(session, 1, { id: "child" });
            return { tree, by, page, child };
          }),
      );
      return { lean: reader.session, whole: whole.session, viaHistory };
    })).pipe(Effect.provide(layerMemoryStore())),
  );

const notHeld = (result: Result.Result<unknown, unknown>, seq: number) => {
  assert.ok(Result.isFailure(result), "a failure, as a value");
  const error = result.failure;
  assert.ok(error instanceof Error);
  assert.equal(Reflect.get(error, "_tag"), "EventsNotHeld");
  assert.equal(Reflect.get(error, "fromSeq"), seq);
  assert.equal(Reflect.get(error, "heldFrom"), 6);
  assert.match(error.message, /store\.withHistory/);
};

Deno.test("on a session opened from a checkpoint, the reads return EventsNotHeld for older events", () => {
  const { lean, whole } = opened();
  assert.equal(Session.heldFrom(lean), 6);
  notHeld(Session.events(lean), 0);
  notHeld(Session.events(lean, 2), 2);
  notHeld(Session.eventAt(lean, 0), 0);
  notHeld(Session.encode(lean), 0);
  // The summary is held (it is on the surface); what it stands for is not.
  assert.equal(
    Result.getOrThrow(Session.eventAt(lean, 4))?.type,
    "user/message",
  );
  notHeld(lineage(lean, 4), 2);
  notHeld(shadowedBy(lean, 0), 0);
  notHeld(surfaceAt(lean, 4), 0);
  // The same reads on the whole log succeed.
  assert.equal(Result.getOrThrow(Session.events(whole)).length, 6);
  assert.equal(Result.getOrThrow(shadowedBy(whole, 0)), 4);
});

Deno.test("diffSurfaces returns EventsNotHeld when a surface from a checkpoint lacks what it needs", () => {
  const { lean, whole } = opened();
  const before = Result.getOrThrow(surfaceAt(whole, 1));
  assert.ok(before !== undefined);
  assert.deepEqual(Result.getOrThrow(diffSurfaces(before, whole.surface)), {
    added: [],
    removed: [],
    replaced: [{ by: 4, shadowed: [0, 1] }],
  });
  notHeld(diffSurfaces(before, lean.surface), 3);
});

Deno.test("fork of a session opened from a checkpoint fails with EventsNotHeld", () => {
  const { lean } = opened();
  const exit = Effect.runSyncExit(fork(lean, 1));
  assert.ok(Exit.isFailure(exit));
  notHeld(Result.fail(Reflect.get(exit.cause.reasons[0] ?? {}, "error")), 0);
});

Deno.test("the view returns EventsNotHeld, before writing anything, for a session opened from a checkpoint", () => {
  const { lean } = opened();
  notHeld(renderSessionHtml(lean), 0);
  const chunks: string[] = [];
  notHeld(writeSessionHtml(lean, (chunk) => chunks.push(chunk)), 0);
  assert.deepEqual(chunks, []);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "held-view-"));
  try {
    const target = path.join(dir, "page.html");
    const exit = Effect.runSyncExit(writeSessionHtmlFile(lean, target));
    assert.ok(Exit.isFailure(exit));
    notHeld(Result.fail(Reflect.get(exit.cause.reasons[0] ?? {}, "error")), 0);
    assert.deepEqual(fs.readdirSync(dir), []);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("store.withHistory reads the older events a failing read asks for", () => {
  const { viaHistory, whole } = opened();
  assert.deepEqual(
    viaHistory.tree?.sources.map((s) => s.seq),
    [2, 3, 0, 1],
  );
  assert.equal(viaHistory.by, 4);
  assert.equal(
    viaHistory.page,
    Result.getOrThrow(renderSessionHtml(whole)),
  );
  assert.deepEqual(
    Result.getOrThrow(Session.events(viaHistory.child)).map((e) => e.type),
    ["user/message", "user/message", "session/end-seed"],
  );
});
