/**
 * Reading a range of a stored log (`src/log/range.ts`, the store's
 * `readRange`): the events of the range, decoded as the reader decodes
 * them, from bytes fed in chunks of any size, stopping once the range is
 * complete; a torn tail is never decoded; a bad line inside the range is
 * reported at its line, one outside it is not read; an older format is
 * refused (the store then reads the log whole). A damaged log read with
 * `recover` into a session that holds only its surface serves its valid
 * prefix that way.
 *
 * @module
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import fc from "fast-check";
import { Effect, Result } from "effect";
import { layerJsonlStore, Session, SessionStore } from "@palimpsest/session";
import {
  INDEX_EVERY,
  type LineIndex,
  makeLineIndex,
  makeRangeScan,
} from "../../src/log/range.ts";
import { encodeLog } from "../../src/store/lines.ts";
import { historySessionArb } from "../_helpers/session_gen.ts";
import { lines } from "../_helpers/checkpoints.ts";
import { headerLine, user as userLine } from "../_helpers/build.ts";

const LIMIT = 1 << 20;

/** Feeds `bytes` in chunks of `size`; the events, and how many bytes were fed. */
const scan = (
  bytes: Uint8Array,
  from: number,
  to: number,
  size: number,
  index?: LineIndex,
) => {
  const range = makeRangeScan(from, to, undefined, LIMIT, index);
  let fed = range.offset;
  while (fed < bytes.length) {
    const pushed = range.push(bytes.subarray(fed, fed + size));
    fed = Math.min(bytes.length, fed + size);
    if (Result.isFailure(pushed)) return { error: pushed.failure, fed };
    if (pushed.success) break;
  }
  return { events: range.events(), fed, offset: range.offset };
};

const text = new TextEncoder();

Deno.test("a range scan gives the range's events for any range and chunk size, and stops once it has them", () => {
  fc.assert(
    fc.property(
      historySessionArb,
      fc.nat(),
      fc.nat(),
      fc.oneof(
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 300, max: 1 << 20 }),
      ),
      (session, a, b, size) => {
        const events = Result.getOrThrow(Session.events(session));
        const bytes = encodeLog(session.header, session, undefined);
        const n = events.length + 1;
        const [from, to] = [a % n, b % n].sort((x, y) => x - y) as [
          number,
          number,
        ];
        const got = scan(bytes, from, to, size);
        assert.deepEqual(
          lines(got.events ?? []),
          lines(events.slice(from, to)),
        );
        // The bytes up to the range's last line are enough.
        const linesUpTo = new TextDecoder().decode(bytes).split("\n")
          .slice(0, to + 1).join("\n").length + 1;
        if (to < events.length) {
          assert.ok(got.fed < linesUpTo + size, `${got.fed} ${linesUpTo}`);
        }
      },
    ),
    { numRuns: 150 },
  );
});

const header = headerLine("r").trimEnd();
const user = (seq: number): string => JSON.stringify(userLine(seq));

Deno.test("a range scan never decodes a torn tail, and reads only the range's lines", () => {
  const log = [header, user(0), "not json", user(2), user(3)].join("\n") +
    "\n" + user(4).slice(0, 20);
  const bytes = text.encode(log);
  // The bad line (seq 1) is outside [2, 5): not read; seq 4 is torn.
  const got = scan(bytes, 2, 5, 7);
  assert.deepEqual(got.events?.map((e) => e.seq), [2, 3]);
  // Inside the range it is reported at its line.
  const bad = scan(bytes, 0, 3, 7);
  assert.equal(bad.error?._tag, "CorruptLine");
  assert.equal(bad.error?._tag === "CorruptLine" && bad.error.line, 3);
});

Deno.test("a range scan refuses an older or newer format", () => {
  for (const [version, tag] of [[2, "FormatTooOld"], [4, "FormatTooNew"]]) {
    const log = `${header.replace('"version":3', `"version":${version}`)}\n${
      user(0)
    }\n`;
    assert.equal(scan(text.encode(log), 0, 1, 64).error?._tag, tag);
  }
});

Deno.test("store.events of a damaged log read with recover, holding only its surface, serves the valid prefix", async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "range-recover-"));
  try {
    const good = Array.from({ length: 6 }, (_, seq) => user(seq));
    fs.writeFileSync(
      path.join(root, "bad.jsonl"),
      [header, ...good, "not json", user(7)].join("\n") + "\n",
    );
    const got = await Effect.runPromise(
      Effect.scoped(Effect.gen(function* () {
        const store = yield* SessionStore;
        const lean = yield* store.open("bad", { recover: true });
        return {
          heldFrom: Session.heldFrom(lean.session),
          stoppedAt: lean.report.stoppedAt?._tag,
          events: yield* store.events(lean),
          some: yield* store.events(lean, { fromSeq: 2, toSeq: 4 }),
        };
      })).pipe(
        Effect.provide(
          layerJsonlStore({ root, checkpoints: { holdLogUpTo: 0 } }),
        ),
      ),
    );
    assert.equal(got.stoppedAt, "CorruptLine");
    assert.equal(got.heldFrom, 6);
    const texts = (events: ReadonlyArray<{ readonly data: unknown }>) =>
      events.map((event) => JSON.stringify(event.data));
    const expected = good.map((line) => JSON.stringify(JSON.parse(line).data));
    assert.deepEqual(texts(got.events), expected);
    assert.deepEqual(texts(got.some), expected.slice(2, 4));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

Deno.test("a scan given an index starts at the nearest line it knows, and gives the same events", () => {
  const n = 3 * INDEX_EVERY + 10;
  const body = Array.from({ length: n }, (_, seq) => user(seq)).join("\n");
  const bytes = text.encode(`${header}\n${body}\n`);
  const index = makeLineIndex();
  const seqsOf = (got: ReturnType<typeof scan>) =>
    got.events?.map((event) => event.seq);
  // A scan from the top remembers the lines it passes, up to its range.
  const first = scan(bytes, n - 10, n, 4096, index);
  assert.equal(first.offset, 0);
  assert.deepEqual([...index.starts.keys()], [
    0,
    INDEX_EVERY,
    2 * INDEX_EVERY,
    3 * INDEX_EVERY,
  ]);
  const lineStart = (seq: number) =>
    text.encode(`${header}\n${body}`.split("\n").slice(0, seq + 1).join("\n"))
      .length + 1;
  for (const [seq, offset] of index.starts) {
    assert.equal(offset, lineStart(seq));
  }
  // A later scan starts at the nearest known line at or before its range.
  const later = scan(bytes, INDEX_EVERY + 500, INDEX_EVERY + 510, 4096, index);
  assert.equal(later.offset, lineStart(INDEX_EVERY));
  assert.deepEqual(
    seqsOf(later),
    Array.from({ length: 10 }, (_, i) => INDEX_EVERY + 500 + i),
  );
  // Before the first known line: from the top.
  assert.equal(scan(bytes, 5, 9, 4096, index).offset, 0);
});

Deno.test("a range scan refuses a line of the range past the limit, in any chunking, and skips a long line outside it", () => {
  const long = JSON.stringify(userLine(1, { text: "x".repeat(500) }));
  const bytes = text.encode(
    [header, user(0), long, user(2)].join("\n") + "\n",
  );
  for (const size of [1, 7, 64, 4096]) {
    const inside = makeRangeScan(1, 2, undefined, 300);
    let error: unknown;
    for (let at = 0; at < bytes.length && error === undefined; at += size) {
      const pushed = inside.push(bytes.subarray(at, at + size));
      if (Result.isFailure(pushed)) error = pushed.failure;
      else if (pushed.success) break;
    }
    assert.equal((error as { _tag?: string } | undefined)?._tag, "LineTooLong");
    assert.equal((error as { line?: number }).line, 3);
    const outside = makeRangeScan(2, 3, undefined, 300);
    for (let at = 0; at < bytes.length; at += size) {
      const pushed = outside.push(bytes.subarray(at, at + size));
      assert.ok(Result.isSuccess(pushed));
      if (pushed.success) break;
    }
    assert.deepEqual(outside.events().map((event) => event.seq), [2]);
  }
});
