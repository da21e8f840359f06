import assert from "node:assert/strict";
import { Schema } from "effect";
import { isSessionSeq, SessionSeq } from "@palimpsest/session";

const INVALID: ReadonlyArray<unknown> = [
  -1,
  -0,
  1.5,
  2 ** 53,
  Number.MAX_VALUE,
  NaN,
  Infinity,
  -Infinity,
  "1",
  null,
  undefined,
  [1],
];

Deno.test("isSessionSeq accepts non-negative safe integers", () => {
  for (const n of [0, 1, 42, Number.MAX_SAFE_INTEGER]) {
    assert.equal(isSessionSeq(n), true, String(n));
  }
});

Deno.test("isSessionSeq refuses -0, NaN, fractions, unsafe and non-numbers", () => {
  for (const value of INVALID) {
    assert.equal(isSessionSeq(value), false, String(value));
  }
});

Deno.test("SessionSeq.make throws on invalid seqs", () => {
  for (const n of [-1, -0, 1.5, 2 ** 53, NaN, Infinity]) {
    assert.throws(() => SessionSeq.make(n), String(n));
  }
  assert.equal(SessionSeq.make(7), 7);
});

Deno.test("the SessionSeq schema decodes exactly the valid seqs", () => {
  const is = Schema.is(SessionSeq);
  for (const value of INVALID) assert.equal(is(value), false, String(value));
  assert.equal(is(0), true);
  assert.equal(Schema.decodeUnknownSync(SessionSeq)(3), 3);
  assert.throws(() => Schema.decodeUnknownSync(SessionSeq)(-0));
});

Deno.test("a plain number is not a SessionSeq at compile time", () => {
  // @ts-expect-error a number is not branded
  const seq: SessionSeq = 3;
  assert.equal(seq, 3);
});
