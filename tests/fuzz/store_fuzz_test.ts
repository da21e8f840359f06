/**
 * Fuzzing the store's open path with damaged files: a reader sees what
 * `readSessionBytes` sees; a writer refuses what a strict read refuses and
 * leaves the file's bytes alone; otherwise it cuts the torn tail, and the next
 * append lands right after the last complete line and reads back.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import { Cause, Effect, Exit, Result, Scope } from "effect";
import * as nodePath from "node:path";
import { makeJsonlStore } from "@palimpsest/session";
import { surfaceNodes } from "@palimpsest/session/internal";
import {
  decodeSessionId,
  encodeHeaderLine,
  encodeSessionId,
  readSessionBytes,
} from "@palimpsest/session/jsonl";
import * as Fuzz from "../_helpers/fuzz.ts";
import { genValidLog } from "../_helpers/fuzz_logs.ts";

const encoder = new TextEncoder();

/** One byte-level damage: truncation, a flip, an insertion or a torn tail. */
const damage = (
  rng: Fuzz.Rng,
  bytes: Uint8Array,
  headerBytes: number,
): Uint8Array => {
  const at = rng.int(headerBytes, bytes.length);
  switch (rng.int(0, 3)) {
    case 0:
      return bytes.subarray(0, at);
    case 1: {
      const out = bytes.slice();
      if (at < out.length) out[at] = (out[at] ?? 0) ^ (1 << rng.int(0, 7));
      return out;
    }
    case 2: {
      const out = new Uint8Array(bytes.length + 1);
      out.set(bytes.subarray(0, at), 0);
      out[at] = rng.pick([10, 13, 0x22, 0xff, 0x7b]);
      out.set(bytes.subarray(at), at + 1);
      return out;
    }
    default: {
      const tail = encoder.encode('{"type":"turn/start","seq":');
      const out = new Uint8Array(bytes.length + tail.length);
      out.set(bytes, 0);
      out.set(tail, bytes.length);
      return out;
    }
  }
};

const tagOf = (cause: Cause.Cause<unknown>): string => {
  assert.ok(!Cause.hasDies(cause), `defect: ${Cause.pretty(cause)}`);
  const found = Cause.findError(cause);
  assert.ok(Result.isSuccess(found));
  const e = found.success;
  assert.ok(typeof e === "object" && e !== null && "_tag" in e);
  return String(e._tag);
};

Deno.test("fuzz: opening damaged files through the store", async () => {
  const root = await Deno.makeTempDir({ prefix: "fuzz-store-" });
  const store = Effect.runSync(makeJsonlStore({ root }));
  const cases: Array<{ id: string; bytes: Uint8Array }> = [];
  Fuzz.fuzz("store/open-damaged", Fuzz.heavyRuns(10), (rng, index) => {
    const id = `fuzz-${Fuzz.config.seed}-${index}`;
    const header = encodeHeaderLine({ id, createdAt: 0, isSeeded: false });
    const log = genValidLog(rng, rng.int(1, 12));
    const text = header +
      log.events.map((e) => `${JSON.stringify(e)}\n`).join("");
    const bytes = damage(
      rng,
      encoder.encode(text),
      encoder.encode(header).length,
    );
    cases.push({ id, bytes });
  });
  for (const { id, bytes } of cases) {
    await Effect.runPromise(
      Effect.scoped(store.create({ id, createdAt: 0, isSeeded: false })),
    );
    const path = nodePath.join(
      root,
      `${Result.getOrThrow(encodeSessionId(id))}.jsonl`,
    );
    fs.writeFileSync(path, bytes);
    const inMemory = Effect.runSyncExit(readSessionBytes(bytes));

    const reader = await Effect.runPromiseExit(Effect.scoped(store.open(id)));
    if (Exit.isSuccess(reader)) {
      assert.ok(Exit.isSuccess(inMemory), id);
      assert.deepEqual(
        surfaceNodes(reader.value.session.surface),
        surfaceNodes(inMemory.value.session.surface),
      );
    } else {
      assert.ok(Exit.isFailure(inMemory), id);
      assert.equal(tagOf(reader.cause), tagOf(inMemory.cause));
    }

    const scope = Effect.runSync(Scope.make());
    const writer = await Effect.runPromiseExit(
      Scope.provide(store.open(id, { mode: "write" }), scope),
    );
    if (Exit.isFailure(writer)) {
      assert.ok(Exit.isFailure(inMemory), id);
      assert.equal(tagOf(writer.cause), tagOf(inMemory.cause));
      // A refused writer never rewrites committed bytes.
      assert.deepEqual(new Uint8Array(fs.readFileSync(path)), bytes);
      continue;
    }
    assert.ok(Exit.isSuccess(inMemory), id);
    const loaded = inMemory.value;
    // The torn tail is cut: the file ends after the last complete line.
    assert.equal(fs.statSync(path).size, loaded.report.bytes);
    const after = await Effect.runPromise(
      store.append(writer.value, [{ type: "turn/start", data: { turn: 9 } }]),
    );
    await Effect.runPromise(Scope.close(scope, Exit.void));
    assert.equal(after.session.surface.nextSeq, loaded.events.length + 1);
    const reread = Effect.runSyncExit(
      readSessionBytes(new Uint8Array(fs.readFileSync(path))),
    );
    assert.ok(Exit.isSuccess(reread));
    assert.equal(reread.value.events.length, loaded.events.length + 1);
    assert.equal(reread.value.report.tornTail, undefined);
    assert.deepEqual(
      new Uint8Array(fs.readFileSync(path)).subarray(0, loaded.report.bytes),
      bytes.subarray(0, loaded.report.bytes),
    );
  }
  await Deno.remove(root, { recursive: true });
});

const ID_ALPHABET = [
  "a",
  "Z",
  "0",
  "-",
  "_",
  ".",
  "..",
  "/",
  "\\",
  "\0",
  "%",
  "%41",
  "%2",
  " ",
  "é",
  "中",
  "😀",
  "\ud800",
  "\udc00",
  "CON",
  ":",
  "*",
  "\n",
];

Deno.test("fuzz: session ids map to safe, reversible, unique file names", () => {
  Fuzz.fuzz("store/session-ids", Fuzz.config.runs * 4, (rng) => {
    let id = "";
    for (let n = rng.int(0, 12); n > 0; n--) id += rng.pick(ID_ALPHABET);
    if (rng.chance(0.02)) id = "x".repeat(rng.int(60, 220));
    const encoded = encodeSessionId(id);
    if (Result.isSuccess(encoded)) {
      const name = encoded.success;
      assert.match(name, /^[a-z0-9_%A-F-]+$/);
      assert.ok(name !== "." && name !== "..");
      assert.equal(decodeSessionId(name), id);
    } else {
      assert.ok(
        ["empty", "not-well-formed", "too-long"].includes(
          encoded.failure.problem,
        ),
      );
    }
    // Any stem that decodes is the one canonical name of its id.
    let stem = "";
    for (let n = rng.int(0, 10); n > 0; n--) {
      stem += rng.pick([
        "a",
        "%",
        "%41",
        "%2F",
        "%e9",
        "%C3%A9",
        "%ED%A0%80",
        "A",
        ".",
        "0",
      ]);
    }
    const back = decodeSessionId(stem);
    if (back !== undefined) {
      const again = encodeSessionId(back);
      assert.ok(Result.isSuccess(again));
      assert.equal(again.success, stem);
    }
  });
  console.log(Fuzz.countsReport());
});
