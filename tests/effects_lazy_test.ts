import assert from "node:assert/strict";
import { Effect, Result } from "effect";
import {
  applyEvent,
  emptySurface,
  type SessionEvent,
} from "@palimpsest/session";
import { decodeEvent } from "@palimpsest/session/schema";
import { decodeEventResult } from "@palimpsest/session/schema";

/** A turn/start value whose every read of `seq` is counted. */
const counted = () => {
  const reads = { count: 0 };
  const value = {
    type: "turn/start",
    time: 0,
    data: { turn: 0 },
    get seq() {
      reads.count++;
      return 0;
    },
  };
  return { reads, value };
};

Deno.test("decodeEvent does its work when run, not when built", () => {
  const { reads, value } = counted();
  const effect = decodeEvent(value);
  assert.equal(reads.count, 0);
  const event = Effect.runSync(effect);
  assert.ok(reads.count > 0);
  assert.equal(event.seq, 0);
});

Deno.test("applyEvent does its work when run, not when built", () => {
  const event: SessionEvent = Result.getOrThrow(
    decodeEventResult({
      type: "turn/start",
      seq: 0,
      time: 0,
      data: { turn: 0 },
    }),
  );
  const reads = { count: 0 };
  const watched = new Proxy(event, {
    get(target, key, receiver) {
      reads.count++;
      return Reflect.get(target, key, receiver);
    },
  });
  const effect = applyEvent(emptySurface, watched);
  assert.equal(reads.count, 0);
  const surface = Effect.runSync(effect);
  assert.ok(reads.count > 0);
  assert.equal(surface.nextSeq, 1);
});
