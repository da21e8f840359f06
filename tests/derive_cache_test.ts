/**
 * Derivation is kept with each surface and extended from the surface a
 * fold started from: whatever order surfaces are folded, forked and derived
 * in, `deriveMessages` must give what a fresh walk of the surface gives.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { Result } from "effect";
import {
  deriveMessages,
  deriveMessagesWithSources,
  emptySurface,
  type Message,
  replayResult,
  type SessionEvent,
  type Surface,
} from "@palimpsest/session";
import { applyEventResult, emptySurfaceAt } from "@palimpsest/session/internal";
import { decoded, s, turnStart, user } from "./_helpers/build.ts";
import { logArb, stepAt } from "./_helpers/log_gen.ts";

/** The messages of a surface by a walk that shares nothing with the cache. */
const walked = (surface: Surface): ReadonlyArray<Message> =>
  deriveMessagesWithSources(surface).map((m) => m.message);

const fold = (events: ReadonlyArray<SessionEvent>, from: Surface): Surface => {
  const result = replayResult(events, from);
  if (Result.isFailure(result)) assert.fail(result.failure.error._tag);
  return result.success;
};

Deno.test("deriving a surface again returns the same frozen messages", () => {
  const surface = fold(
    [0, 1, 2].map((seq) => decoded(user(seq))),
    emptySurface,
  );
  const first = deriveMessages(surface);
  assert.equal(deriveMessages(surface), first);
  assert.ok(Object.isFrozen(first));
  assert.throws(() => (first as Message[]).push(first[0] ?? assert.fail()));
  assert.deepEqual(deriveMessages(surface), walked(surface));
  // A log-only event changes no message: the same list.
  const logged = fold([decoded(turnStart(3))], surface);
  assert.equal(deriveMessages(logged), first);
  // An appended node extends a new list and leaves the old one as it was.
  const extended = fold([decoded(user(4))], logged);
  assert.equal(deriveMessages(extended).length, 4);
  assert.equal(first.length, 3);
});

Deno.test("law: derive equals a fresh walk, whatever was derived, folded or forked before", () => {
  fc.assert(
    fc.property(
      logArb(),
      fc.array(fc.nat(), { minLength: 1, maxLength: 8 }),
      fc.array(fc.boolean(), { maxLength: 80 }),
      (log, cuts, deriveAt) => {
        const events = log.lines.map((line) => decoded(line));
        const start = log.base === 0
          ? emptySurface
          : emptySurfaceAt(s(log.base));
        // Fold one event at a time, deriving at some of the surfaces.
        const surfaces: Surface[] = [start];
        let surface = start;
        for (let i = 0; i < events.length; i++) {
          const event = events[i] ?? assert.fail();
          const next = applyEventResult(surface, event);
          if (Result.isFailure(next)) assert.fail(next.failure._tag);
          surface = next.success;
          surfaces.push(surface);
          if (deriveAt[i] === true) {
            assert.deepEqual(deriveMessages(surface), walked(surface));
          }
        }
        // Go back to earlier surfaces (rerooting the store), derive them,
        // fork them with a different event and fold the rest again.
        for (const cut of cuts) {
          const at = cut % surfaces.length;
          const earlier = surfaces[at] ?? assert.fail();
          assert.deepEqual(deriveMessages(earlier), walked(earlier));
          const model = log.models[at - 1];
          const seqs = model?.nodes.filter((n) => stepAt(model, n)?.derives);
          assert.equal(deriveMessages(earlier).length, seqs?.length ?? 0);
          const fork = fold(
            [decoded(user(earlier.nextSeq, { id: `fork-${at}` }))],
            earlier,
          );
          const forkMessages = deriveMessages(fork);
          assert.deepEqual(forkMessages, walked(fork));
          assert.equal(forkMessages.at(-1)?.id, `fork-${at}`);
          const again = fold(events.slice(at), earlier);
          assert.deepEqual(deriveMessages(again), walked(again));
          assert.deepEqual(deriveMessages(again), deriveMessages(surface));
          // The surfaces derived before are still what they were.
          assert.deepEqual(deriveMessages(fork), walked(fork));
          assert.deepEqual(deriveMessages(earlier), walked(earlier));
        }
      },
    ),
    { seed: 20261203, numRuns: 150 },
  );
});
