import assert from "node:assert/strict";
import { Result } from "effect";
import {
  deriveMessages,
  type SessionEvent,
  SessionSeq,
  type Surface,
} from "@palimpsest/session";
import {
  applyEventResult,
  emptySurfaceAt,
  logEvent,
  surfaceNodes,
} from "@palimpsest/session/internal";
import { replayResult } from "@palimpsest/session";
import { decoded, replace, turnStart, user } from "../_helpers/build.ts";

const log: ReadonlyArray<SessionEvent> = [
  decoded(turnStart(0)),
  decoded(user(1)),
  decoded(user(2)),
  decoded(user(3, { op: replace(1, 1), sources: [1] })),
];

Deno.test("a surface that does not keep its log keeps only its nodes' events", () => {
  const base = SessionSeq.make(0);
  const lean = Result.getOrThrow(
    replayResult(log, emptySurfaceAt(base, { keepLog: false })),
  );
  const full = Result.getOrThrow(replayResult(log, emptySurfaceAt(base)));
  assert.deepEqual(surfaceNodes(lean), surfaceNodes(full));
  assert.deepEqual(deriveMessages(lean), deriveMessages(full));
  assert.equal(lean.keepsLog, false);
  assert.equal(logEvent(lean, SessionSeq.make(0)), undefined);
  assert.equal(logEvent(lean, SessionSeq.make(1)), undefined);
  assert.equal(logEvent(full, SessionSeq.make(1))?.seq, 1);
  assert.equal(logEvent(lean, SessionSeq.make(3))?.seq, 3);
});

Deno.test("an older lean surface still sees the node a newer one shadowed", () => {
  const before = Result.getOrThrow(
    replayResult(
      log.slice(0, 3),
      emptySurfaceAt(SessionSeq.make(0), { keepLog: false }),
    ),
  );
  const after = Result.getOrThrow(replayResult(log.slice(3), before));
  assert.deepEqual(surfaceNodes(after), [3, 2]);
  assert.deepEqual(deriveMessages(before).map((m) => m.id), ["u1", "u2"]);
  assert.deepEqual(deriveMessages(after).map((m) => m.id), ["u3", "u2"]);
});

Deno.test("applying events one by one equals replaying them, lean or not", () => {
  const longer = [...log, decoded(turnStart(4)), decoded(user(5))];
  for (const keepLog of [true, false]) {
    const empty = emptySurfaceAt(SessionSeq.make(0), { keepLog });
    const versions: Surface[] = [empty];
    for (const event of longer) {
      const last = versions[versions.length - 1] ?? assert.fail();
      versions.push(Result.getOrThrow(applyEventResult(last, event)));
    }
    // Every version, read after the later ones were made, is the replay of
    // its prefix: its nodes, messages and the events its log holds.
    versions.forEach((surface, n) => {
      const replayed = Result.getOrThrow(
        replayResult(longer.slice(0, n), empty),
      );
      assert.deepEqual(surfaceNodes(surface), surfaceNodes(replayed));
      assert.deepEqual(deriveMessages(surface), deriveMessages(replayed));
      for (let seq = 0; seq <= longer.length; seq++) {
        const at = SessionSeq.make(seq);
        assert.equal(logEvent(surface, at), logEvent(replayed, at));
      }
    });
  }
});
