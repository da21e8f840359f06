/**
 * A log stored before the rule that a replacement never shadows an
 * unanswered call (tests/fixtures/stored/shadowed-unanswered-call.jsonl:
 * a compaction over a call whose result came after it) stays readable, by
 * the reader and through the store, while an append is held to the rule;
 * and the late result is reported when a request leaves it out.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { Effect, Exit } from "effect";
import { compact, deriveMessages, Session } from "@palimpsest/session";
import { surfaceNodes } from "@palimpsest/session/internal";
import { readSessionBytes } from "@palimpsest/session/jsonl";
import { pairToolCalls } from "@palimpsest/session/providers";
import { failureOf, thenFails } from "../_helpers/then.ts";
import { tempDir, useStore } from "../_helpers/store.ts";
import { unansweredLs } from "../_helpers/build.ts";

const fixture = new URL(
  "../fixtures/stored/shadowed-unanswered-call.jsonl",
  import.meta.url,
);
const bytes = fs.readFileSync(fixture);

Deno.test("a stored replacement over an unanswered call reads back, strictly and holding only the surface", () => {
  for (const options of [{}, { holdLogUpTo: 2 }]) {
    const { session } = Effect.runSync(readSessionBytes(bytes, options));
    assert.deepEqual(surfaceNodes(session.surface), [4, 6]);
  }
});

Deno.test("the late result is left out of a request, and reported", () => {
  const { session } = Effect.runSync(readSessionBytes(bytes));
  const { messages, repairs } = pairToolCalls(deriveMessages(session.surface));
  assert.deepEqual(messages.map((m) => m.id), ["compaction-k"]);
  assert.deepEqual(repairs, [{
    _tag: "DroppedToolResult",
    callId: "c1",
    reason: "unknown",
    messageIndex: 1,
    blockIndex: 0,
  }]);
});

Deno.test("a store opens such a log for writing and holds new appends to the rule", async () => {
  const root = tempDir();
  try {
    const id = "shadowed";
    await useStore(root, (store) =>
      Effect.gen(function* () {
        yield* Effect.scoped(store.create({
          id,
          createdAt: 0,
          isSeeded: false,
        }));
      }));
    const [file] = fs.readdirSync(root).filter((f) => f.endsWith(".jsonl"));
    assert.ok(file !== undefined);
    fs.writeFileSync(path.join(root, file), bytes);
    const { refused, after } = await useStore(
      root,
      (store) =>
        Effect.gen(function* () {
          const handle = yield* store.open(id, { mode: "write" });
          // A new call with no result, then a compaction over it.
          yield* store.append(handle, [unansweredLs]);
          const refused = yield* Effect.exit(
            store.update(handle, (session) =>
              compact(session, {
                startSeq: 6,
                endSeq: 7,
                summary: "s",
                compactionId: "k2",
              })),
          );
          return { refused, after: handle.session };
        }),
    );
    assert.ok(Exit.isFailure(refused));
    thenFails(failureOf(refused), "ReplaceShadowsUnansweredCall", {
      callSeq: 7,
      callIds: ["c7"],
    });
    assert.equal(Session.nextSeq(after), 8);
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
