import assert from "node:assert/strict";
import fc from "fast-check";
import { Result } from "effect";
import { SessionSeq } from "@palimpsest/session";
import {
  compressSourceSeqs,
  decodeEventLine,
  decodeEventValue,
  decodeHeaderLine,
  decodeSessionHeader,
  encodeEventLine,
  encodeHeaderLine,
  expandSourceSeqs,
} from "@palimpsest/session/jsonl";
import { decodeEventResult } from "@palimpsest/session/schema";
import { failureOf, thenFails } from "../_helpers/then.ts";

const seqs = (ns: number[]) => ns.map((n) => SessionSeq.make(n));

const summary = (seq: number, sources: unknown) => ({
  type: "user/message",
  seq,
  time: 0,
  data: {
    id: `s${seq}`,
    role: "user",
    content: [],
    source: { kind: "plugin", plugin: "compaction" },
  },
  surfaceOp: "append",
  sourceEventSeqs: sources,
});

Deno.test("header line", async (t) => {
  await t.step("encodes in key order and decodes back", () => {
    const header = {
      id: "a/b",
      createdAt: 7,
      isSeeded: true,
      parentSession: "p",
      meta: { k: 1 },
    };
    const line = encodeHeaderLine(header);
    assert.equal(
      line,
      '{"type":"session","version":3,"id":"a/b","createdAt":7,"isSeeded":true,"parentSession":"p","meta":{"k":1}}\n',
    );
    const read = Result.getOrThrow(decodeHeaderLine(JSON.parse(line)));
    assert.equal(read.version, 3);
    assert.deepEqual(Result.getOrThrow(decodeSessionHeader(read.raw)), header);
  });
  await t.step("refuses what is not a session header", () => {
    const cases: Array<[unknown, string]> = [
      [[], "not-an-object"],
      [{ type: "sess", version: 3 }, "not-a-session"],
      [{ type: "session", version: 1.5 }, "invalid-version"],
      [{ type: "session" }, "invalid-version"],
    ];
    for (const [value, problem] of cases) {
      const result = decodeHeaderLine(value);
      assert.equal(Result.isFailure(result) && result.failure.problem, problem);
    }
  });
  await t.step("refuses unknown keys and bad fields in v3", () => {
    const base = { type: "session", version: 3, createdAt: 0, isSeeded: false };
    const unknown = decodeSessionHeader({ ...base, id: "a", extra: 1 });
    assert.equal(Result.isFailure(unknown) && unknown.failure.key, "extra");
    const empty = decodeSessionHeader({ ...base, id: "" });
    assert.ok(Result.isFailure(empty));
    assert.equal(empty.failure.problem, "invalid-field");
    assert.equal(empty.failure.key, "id");
  });
});

Deno.test("source runs", async (t) => {
  await t.step("expand(compress(xs)) is xs for increasing lists", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 60 }), { maxLength: 40 }),
        (raw) => {
          const sorted = seqs([...raw].sort((a, b) => a - b));
          const stored = compressSourceSeqs(sorted);
          const back = expandSourceSeqs(stored, 1000);
          assert.deepEqual(Result.getOrThrow(back), sorted);
          for (const element of stored) {
            if (Array.isArray(element)) {
              assert.ok(element[1] - element[0] >= 2, "runs are 3 or longer");
            }
          }
        },
      ),
    );
  });
  await t.step("only runs of 3 or more are compressed", () => {
    assert.deepEqual(compressSourceSeqs(seqs([0, 1, 3, 4, 5])), [0, 1, [3, 5]]);
    assert.deepEqual(compressSourceSeqs(seqs([0, 1])), [0, 1]);
  });
  await t.step("a list that is not increasing is kept as it is", () => {
    assert.deepEqual(compressSourceSeqs(seqs([5, 1, 2, 3])), [5, 1, 2, 3]);
  });
  await t.step("the writer compresses and the reader expands", () => {
    const event = Result.getOrThrow(
      decodeEventResult(summary(10, [0, 1, 2, 3, 4, 7])),
    );
    const line = encodeEventLine(event);
    assert.ok(line.includes('"sourceEventSeqs":[[0,4],7]'));
    const back = Result.getOrThrow(decodeEventLine(line.slice(0, -1)));
    assert.deepEqual(back, event);
  });
  await t.step("bad pairs are tagged errors", () => {
    const cases: Array<[unknown, string]> = [
      [[[1, 2, 3]], "not-a-pair"],
      [[[1]], "not-a-pair"],
      [[[1, -1]], "not-a-seq"],
      [[[1, 0.5]], "not-a-seq"],
      [[[4, 2]], "inverted"],
      [[5, [3, 6]], "not-increasing"],
      [[[3, 6], 6], "not-increasing"],
      [[[3, 6], [6, 8]], "not-increasing"],
      [[[3, 10]], "not-earlier"],
    ];
    for (const [sources, problem] of cases) {
      const result = decodeEventValue(summary(10, sources));
      assert.ok(Result.isFailure(result), JSON.stringify(sources));
      thenFails(result.failure, "InvalidSourceRange", { problem });
    }
  });
  await t.step("pairs on a log-only event are refused by the decoder", () => {
    const result = decodeEventValue({
      type: "turn/start",
      seq: 4,
      time: 0,
      data: { turn: 0 },
      sourceEventSeqs: [[0, 2]],
    });
    thenFails(failureOf(result), "SurfaceMetadataOnLogOnlyEvent");
  });
});

Deno.test("event lines", async (t) => {
  await t.step("are canonical JSON with a newline", () => {
    const event = Result.getOrThrow(decodeEventResult({
      data: { turn: 2 },
      time: 3,
      type: "turn/start",
      seq: 0,
    }));
    assert.equal(
      encodeEventLine(event),
      '{"type":"turn/start","seq":0,"time":3,"data":{"turn":2}}\n',
    );
  });
  await t.step("opaque events keep their bytes", () => {
    const lines = [
      '{"seq":3,"type":"x/y","ignorable":true,"time":0,"data":{"z":1,  "a":[1,2]}}',
      '{"type":"x/z","seq":3,"time":0,"data":null,"ignorable":true,"surfaceOp":"weird","sourceEventSeqs":[[0,9]]}',
    ];
    for (const line of lines) {
      const event = Result.getOrThrow(decodeEventLine(line));
      assert.equal(encodeEventLine(event), `${line}\n`);
    }
  });
  await t.step("a line that is not JSON is InvalidJson", () => {
    const result = decodeEventLine('{"type":');
    thenFails(failureOf(result), "InvalidJson");
  });
});
