/**
 * Fuzzing the streaming reader: byte-level mutations of valid JSONL logs
 * (truncation at every offset, bit flips, byte insertion and deletion,
 * duplicated, swapped and dropped lines, CR/LF mixes, BOMs, invalid UTF-8,
 * header damage, tiny line limits), each read in one chunk and in random
 * chunks, strict and with `recover`, and compared with an independent model
 * of the reader (tests/_helpers/reader_model.ts) built on the reference
 * checker.
 *
 * Properties on every case: no defect and no throw, only the documented
 * `LogReadError` tags with their line; the model's prediction (outcome,
 * line, inner tag, seq, served events, surface, torn tail, byte count);
 * chunking does not change the result; the prefix served under `recover`
 * is exactly what a strict read of the bytes before the bad line serves;
 * built-in prototypes are untouched.
 */
import assert from "node:assert/strict";
import { Cause, Effect, Exit, Result } from "effect";
import { isOpaqueEvent } from "@palimpsest/session/schema";
import { surfaceNodes } from "@palimpsest/session/internal";
import {
  decodeEventLine,
  encodeEventLine,
  type LoadedLog,
  type LogReadError,
  type ReadOptions,
  readSessionBytes,
  readSessionFile,
} from "@palimpsest/session/jsonl";
import { decodeEventResult, encodeEvent } from "@palimpsest/session/schema";
import {
  config,
  countsReport,
  fuzz,
  heavyRuns,
  leavesPrototypes,
  type Rng,
} from "../_helpers/fuzz.ts";
import { genValidLog } from "../_helpers/fuzz_logs.ts";
import { headerLine, user } from "../_helpers/build.ts";
import { type ModelError, modelRead } from "../_helpers/reader_model.ts";
import { DECODE_TAGS, FOLD_TAGS } from "../_helpers/fuzz_compare.ts";
import { jsonEqual } from "../_helpers/reference_checker.ts";
import { thenFails } from "../_helpers/then.ts";

const READ_TAGS = [
  "CorruptLine",
  "FoldFailed",
  "LineTooLong",
  "MissingHeader",
  "FormatTooNew",
  "FormatTooOld",
];
const LINE_TAGS = [
  "InvalidJson",
  "TooManyContainers",
  "InvalidUtf8",
  "InvalidHeader",
  "InvalidSourceRange",
  ...DECODE_TAGS,
];

const encoder = new TextEncoder();

/** A valid log as bytes: raw JSON lines, or the codec's canonical lines. */
const validBytes = (rng: Rng, length: number): Uint8Array => {
  const log = genValidLog(rng, length);
  const canonical = rng.chance(0.5);
  let text = headerLine(`fuzz-${rng.int(0, 9999)}`);
  for (const e of log.events) {
    if (canonical) {
      const decoded = decodeEventResult(JSON.parse(JSON.stringify(e)));
      assert.ok(Result.isSuccess(decoded));
      text += encodeEventLine(decoded.success);
    } else text += `${JSON.stringify(e)}\n`;
  }
  return encoder.encode(text);
};

/** Random chunks of `bytes` (sometimes 1-byte chunks, sometimes empty). */
const chunksOf = (rng: Rng, bytes: Uint8Array): Uint8Array[] => {
  const out: Uint8Array[] = [];
  let at = 0;
  // Small chunks for small inputs; a 10 MB line in 64-byte chunks would
  // only make the suite slow.
  const scale = Math.max(1, Math.floor(bytes.length / 4096));
  const tiny = rng.chance(0.1) && scale === 1;
  while (at < bytes.length) {
    const n = tiny ? 1 : rng.int(0, 64 * scale);
    out.push(bytes.slice(at, at + n));
    at += n;
  }
  if (rng.chance(0.2)) out.push(new Uint8Array(0));
  return out;
};

type Read = { ok: true; log: LoadedLog } | { ok: false; error: LogReadError };

/** Reads, asserting that no defect or interruption escapes. */
const read = (
  input: Uint8Array | Iterable<Uint8Array>,
  options: ReadOptions,
): Read => {
  const exit = Effect.runSyncExit(readSessionBytes(input, options));
  if (Exit.isSuccess(exit)) return { ok: true, log: exit.value };
  assert.ok(!Cause.hasDies(exit.cause), `defect: ${Cause.pretty(exit.cause)}`);
  assert.ok(!Cause.hasInterrupts(exit.cause));
  const found = Cause.findError(exit.cause);
  assert.ok(Result.isSuccess(found));
  const error = found.success;
  assert.ok(READ_TAGS.includes(error._tag), error._tag);
  assert.ok(error instanceof Error);
  return { ok: false, error };
};

const errorShape = (
  e: LogReadError,
): { tag: string; line?: number; innerTag?: string; seq?: number } => {
  switch (e._tag) {
    case "CorruptLine":
      assert.ok(LINE_TAGS.includes(e.innerTag), e.innerTag);
      return { tag: e._tag, line: e.line, innerTag: e.innerTag };
    case "FoldFailed":
      assert.ok(FOLD_TAGS.includes(e.innerTag), e.innerTag);
      return { tag: e._tag, line: e.line, innerTag: e.innerTag, seq: e.seq };
    case "LineTooLong":
      return { tag: e._tag, line: e.line };
    default:
      return { tag: e._tag };
  }
};

const modelShape = (
  e: ModelError,
): { tag: string; line?: number; innerTag?: string; seq?: number } => {
  const out: { tag: string; line?: number; innerTag?: string; seq?: number } = {
    tag: e.tag,
  };
  if (
    e.tag === "CorruptLine" || e.tag === "FoldFailed" || e.tag === "LineTooLong"
  ) {
    if (e.line !== undefined) out.line = e.line;
  }
  if (e.innerTag !== undefined) out.innerTag = e.innerTag;
  if (e.tag === "FoldFailed" && e.seq !== undefined) out.seq = e.seq;
  return out;
};

const outcomes = new Map<string, number>();

/** The summary of a read, comparable across chunkings. */
const summary = (r: Read): unknown =>
  r.ok
    ? {
      events: r.log.events.length,
      nodes: surfaceNodes(r.log.session.surface),
      lines: r.log.report.lines,
      bytes: r.log.report.bytes,
      tornTail: r.log.report.tornTail,
      stoppedAt: r.log.report.stoppedAt === undefined
        ? undefined
        : errorShape(r.log.report.stoppedAt),
    }
    : errorShape(r.error);

/**
 * Every property on one input: model agreement for both modes, chunking
 * independence, the recover-prefix law, prototypes.
 */
const judgeBytes = (
  rng: Rng,
  bytes: Uint8Array,
  options: { maxLineBytes?: number } = {},
): void => {
  leavesPrototypes(() => {
    for (const recover of [false, true]) {
      const opts: ReadOptions = { ...options, recover };
      const whole = read(bytes, opts);
      const chunked = read(chunksOf(rng, bytes), opts);
      assert.deepEqual(summary(chunked), summary(whole), "chunking matters");
      const model = modelRead(bytes, opts);
      if (model.ok) {
        if (!whole.ok) {
          assert.fail(
            `reader failed ${
              JSON.stringify(errorShape(whole.error))
            } but the model serves ${model.events} events (recover: ${recover})`,
          );
        }
        const { log } = whole;
        assert.deepEqual(
          {
            events: log.events.length,
            nodes: [...surfaceNodes(log.session.surface)],
            lines: log.report.lines,
            bytes: log.report.bytes,
            tornTail: log.report.tornTail,
            stoppedAt: log.report.stoppedAt === undefined
              ? undefined
              : errorShape(log.report.stoppedAt),
          },
          {
            events: model.events,
            nodes: model.nodes,
            lines: model.lines,
            bytes: model.bytes,
            tornTail: model.tornTail,
            stoppedAt: model.stoppedAt === undefined
              ? undefined
              : modelShape(model.stoppedAt),
          },
          `recover: ${recover}`,
        );
        // Served events are exactly the folded ones.
        assert.equal(log.session.surface.nextSeq, log.events.length);
        if (!recover) assertLinesRoundTrip(log, bytes);
        const key = model.stoppedAt === undefined
          ? model.tornTail === undefined ? "served" : "served+torn-tail"
          : `stopped:${model.stoppedAt.tag}:${model.stoppedAt.innerTag ?? ""}`;
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
        if (model.stoppedAt !== undefined) {
          // The recover prefix is what a strict read of the prefix serves.
          const prefix = read(bytes.subarray(0, model.stoppedAt.offset), {
            ...options,
          });
          assert.ok(prefix.ok, "the prefix before the bad line reads strictly");
          assert.equal(prefix.log.events.length, log.events.length);
          assert.deepEqual(
            surfaceNodes(prefix.log.session.surface),
            surfaceNodes(log.session.surface),
          );
          assert.equal(prefix.log.report.tornTail, undefined);
        }
      } else {
        if (whole.ok) {
          assert.fail(
            `reader served ${whole.log.events.length} events but the model fails ${
              JSON.stringify(modelShape(model.error))
            } (recover: ${recover})`,
          );
        }
        assert.deepEqual(errorShape(whole.error), modelShape(model.error));
        const key = `failed:${model.error.tag}:${model.error.innerTag ?? ""}`;
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      }
    }
  });
};

/** Every served event writes back to a line that reads as the same event. */
const assertLinesRoundTrip = (log: LoadedLog, bytes: Uint8Array): void => {
  const read = new TextDecoder().decode(bytes.subarray(0, log.report.bytes))
    .split("\n");
  log.events.forEach((event, k) => {
    const line = encodeEventLine(event);
    assert.ok(line.endsWith("\n") && line.indexOf("\n") === line.length - 1);
    const again = decodeEventLine(line.slice(0, -1));
    assert.ok(Result.isSuccess(again));
    assert.ok(jsonEqual(encodeEvent(again.success), encodeEvent(event)));
    // An opaque event comes back byte for byte (less a CR the reader cut).
    if (isOpaqueEvent(event)) {
      const original = (read[k + 1] ?? "").replace(/\r$/, "");
      assert.equal(line, `${original}\n`);
    }
  });
};

// ---------------------------------------------------------------------------
// Byte mutations

const splice = (
  bytes: Uint8Array,
  at: number,
  remove: number,
  insert: ArrayLike<number> = [],
): Uint8Array => {
  const out = new Uint8Array(bytes.length - remove + insert.length);
  out.set(bytes.subarray(0, at), 0);
  out.set(insert, at);
  out.set(bytes.subarray(at + remove), at + insert.length);
  return out;
};

const lineStarts = (bytes: Uint8Array): number[] => {
  const out = [0];
  for (let i = 0; i < bytes.length - 1; i++) {
    if (bytes[i] === 10) out.push(i + 1);
  }
  return out;
};

const splitLines = (bytes: Uint8Array): Uint8Array[] => {
  const out: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 10) {
      out.push(bytes.slice(start, i + 1));
      start = i + 1;
    }
  }
  if (start < bytes.length) out.push(bytes.slice(start));
  return out;
};

const join = (parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
};

const INVALID_UTF8: ReadonlyArray<ReadonlyArray<number>> = [
  [0xff],
  [0xfe],
  [0x80],
  [0xc0, 0x80],
  [0xc3],
  [0xe2, 0x82],
  [0xed, 0xa0, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
];
const INSERT_BYTES = [
  10,
  13,
  0,
  0x22,
  0x7b,
  0x7d,
  0x5b,
  0x2c,
  0x3a,
  0x5c,
  0x20,
  0x31,
  0xef,
];

const MUTATORS: Record<string, (rng: Rng, b: Uint8Array) => Uint8Array> = {
  bitFlip: (rng, b) => {
    const out = b.slice();
    const flips = rng.int(1, 3);
    for (let i = 0; i < flips; i++) {
      const at = rng.int(0, out.length - 1);
      out[at] = (out[at] ?? 0) ^ (1 << rng.int(0, 7));
    }
    return out;
  },
  insertByte: (rng, b) =>
    splice(b, rng.int(0, b.length), 0, [
      rng.chance(0.7) ? rng.pick(INSERT_BYTES) : rng.int(0, 255),
    ]),
  deleteBytes: (rng, b) => {
    const at = rng.int(0, b.length - 1);
    return splice(b, at, Math.min(rng.int(1, 8), b.length - at));
  },
  duplicateLine: (rng, b) => {
    const lines = splitLines(b);
    const i = rng.int(1, lines.length - 1);
    const line = lines[i];
    if (line === undefined) return b;
    lines.splice(rng.int(1, lines.length), 0, line);
    return join(lines);
  },
  swapLines: (rng, b) => {
    const lines = splitLines(b);
    if (lines.length < 3) return b;
    const i = rng.int(1, lines.length - 2);
    const j = rng.int(i + 1, lines.length - 1);
    const a = lines[i];
    const c = lines[j];
    if (a === undefined || c === undefined) return b;
    lines[i] = c;
    lines[j] = a;
    return join(lines);
  },
  dropLine: (rng, b) => {
    const lines = splitLines(b);
    lines.splice(rng.int(0, lines.length - 1), 1);
    return join(lines);
  },
  crlfMix: (rng, b) => {
    const parts: number[] = [];
    const p = rng.next();
    for (const byte of b) {
      if (byte === 10 && rng.chance(p)) parts.push(13);
      parts.push(byte);
    }
    if (rng.chance(0.3)) {
      // A lone CR somewhere, and sometimes CR CR LF.
      parts.splice(rng.int(0, parts.length), 0, 13);
    }
    return Uint8Array.from(parts);
  },
  bom: (rng, b) => {
    const starts = lineStarts(b);
    const at = rng.chance(0.5) ? 0 : rng.pick(starts);
    return splice(b, at, 0, [0xef, 0xbb, 0xbf]);
  },
  invalidUtf8: (rng, b) => {
    const at = rng.int(0, b.length);
    const replace = at < b.length && rng.chance(0.3) ? 1 : 0;
    return splice(b, at, replace, rng.pick(INVALID_UTF8));
  },
  truncate: (rng, b) => b.subarray(0, rng.int(0, b.length)),
  header: (rng, b) => {
    const lines = splitLines(b);
    const header = rng.pick<Record<string, unknown>>([
      { type: "session", version: 2, id: "a", createdAt: 0, isSeeded: false },
      { type: "session", version: 4, id: "a", createdAt: 0, isSeeded: false },
      { type: "session", version: "3", id: "a", createdAt: 0, isSeeded: false },
      { type: "session", version: -1, id: "a", createdAt: 0, isSeeded: false },
      { type: "session", version: 3, createdAt: 0, isSeeded: false },
      { type: "session", version: 3, id: "", createdAt: 0, isSeeded: false },
      { type: "session", version: 3, id: "a", createdAt: 1.5, isSeeded: false },
      { type: "session", version: 3, id: "a", createdAt: 0, isSeeded: 0 },
      {
        type: "session",
        version: 3,
        id: "a",
        createdAt: 0,
        isSeeded: false,
        extra: 1,
      },
      {
        type: "session",
        version: 3,
        id: "a",
        createdAt: 0,
        isSeeded: false,
        parentSession: "",
      },
      {
        type: "session",
        version: 3,
        id: "a",
        createdAt: 0,
        isSeeded: false,
        meta: [],
      },
      { type: "Session", version: 3, id: "a", createdAt: 0, isSeeded: false },
      JSON.parse(
        `{"type":"session","version":3,"id":"a","createdAt":0,"isSeeded":false,"meta":{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}}`,
      ),
      {
        type: "session",
        version: 3,
        id: "a/../../etc",
        createdAt: 0,
        isSeeded: true,
        parentSession: "p",
      },
    ]);
    lines[0] = encoder.encode(`${JSON.stringify(header)}\n`);
    return join(lines);
  },
};

const MUTATOR_NAMES = Object.keys(MUTATORS);

Deno.test("fuzz: a small log truncated at every byte offset", () => {
  const logs = heavyRuns(100);
  fuzz("reader/truncate-every-offset", logs, (rng) => {
    const bytes = validBytes(rng, rng.int(3, 6));
    for (let cut = 0; cut <= bytes.length; cut++) {
      judgeBytes(rng, bytes.subarray(0, cut));
    }
  });
});

Deno.test("fuzz: byte mutations of valid logs", () => {
  fuzz("reader/byte-mutation", config.runs * 2, (rng, index) => {
    const name = MUTATOR_NAMES[index % MUTATOR_NAMES.length] ?? "bitFlip";
    const mutate = MUTATORS[name];
    if (mutate === undefined) return;
    let bytes = validBytes(rng, rng.int(1, 15));
    const rounds = rng.chance(0.2) ? rng.int(2, 4) : 1;
    for (let i = 0; i < rounds && bytes.length > 0; i++) {
      bytes = mutate(rng, bytes);
    }
    judgeBytes(rng, bytes);
  });
});

Deno.test("fuzz: a small maximum line length bounds every line", () => {
  fuzz("reader/max-line-length", config.runs, (rng) => {
    const bytes = validBytes(rng, rng.int(1, 10));
    judgeBytes(rng, bytes, { maxLineBytes: rng.int(0, 700) });
  });
});

/** A header, one event, then a line that never ends (512 MiB if pulled). */
function* endless(
  chunk: Uint8Array,
  counter: { pulled: number },
): Generator<Uint8Array> {
  yield encoder.encode(headerLine("fuzz"));
  yield encoder.encode(
    '{"type":"turn/start","seq":0,"time":0,"data":{"turn":0}}\n{"a":"',
  );
  for (let i = 0; i < 512; i++) {
    counter.pulled++;
    yield chunk;
  }
}

Deno.test("fuzz: an endless line stops the read without buffering it", () => {
  fuzz("reader/endless-line", heavyRuns(30), (rng) => {
    const mib = 1024 * 1024;
    const limit = rng.int(1, 4) * mib;
    const chunk = encoder.encode("x".repeat(mib));
    for (const recover of [false, true]) {
      const counter = { pulled: 0 };
      const r = read(endless(chunk, counter), { recover, maxLineBytes: limit });
      const error = r.ok ? r.log.report.stoppedAt : r.error;
      assert.ok(error !== undefined);
      thenFails(error, "LineTooLong", { line: 3 });
      if (r.ok) assert.equal(r.log.events.length, 1);
      // It held at most the limit's worth of the line.
      assert.ok(
        counter.pulled <= limit / mib + 1,
        `pulled ${counter.pulled} MiB`,
      );
    }
  });
});

Deno.test("fuzz: the reader stops pulling chunks at the first bad line", () => {
  fuzz("reader/stops-pulling", heavyRuns(30), (rng) => {
    let pulled = 0;
    const good = validBytes(rng, rng.int(1, 5));
    function* source(): Generator<Uint8Array> {
      yield good;
      yield encoder.encode("not json\n");
      for (let i = 0; i < 1000; i++) {
        pulled++;
        yield encoder.encode(
          '{"type":"turn/start","seq":99,"time":0,"data":{"turn":0}}\n',
        );
      }
    }
    const r = read(source(), { recover: rng.chance(0.5) });
    const error = r.ok ? r.log.report.stoppedAt : r.error;
    assert.ok(error !== undefined);
    thenFails(error, "CorruptLine");
    assert.equal(pulled, 0, `pulled ${pulled} chunks after the bad line`);
  });
});

// ---------------------------------------------------------------------------
// Hostile values through the line layer

const deep = (n: number, leaf: string): string =>
  `${"[".repeat(n)}${leaf}${"]".repeat(n)}`;

const HEADER_OK =
  `{"type":"session","version":3,"id":"h","createdAt":0,"isSeeded":false}`;
const USER_LINE = (seq: number, extra: string): string =>
  `{"type":"user/message","seq":${seq},"time":0,"data":{"id":"u","role":"user","content":[],"source":{"kind":"user"}},"surfaceOp":"append"${extra}}`;

const hostileFiles = (n: number): ReadonlyArray<readonly [string, string]> => {
  const d = deep(n, `{"toJSON":1}`);
  // 10 MB in the long run; 1 MB keeps the suite quick.
  const mib = config.runs >= 1000 ? 10 : 1;
  const big = `"${"x".repeat(mib * 1024 * 1024)}"`;
  return [
    [
      "header-id",
      `{"type":"session","version":3,"id":${d},"createdAt":0,"isSeeded":false}\n`,
    ],
    [
      "header-version",
      `{"type":"session","version":${d},"id":"h","createdAt":0,"isSeeded":false}\n`,
    ],
    ["header-type", `{"type":${d},"version":3}\n`],
    [
      "header-meta",
      `{"type":"session","version":3,"id":"h","createdAt":0,"isSeeded":false,"meta":${d}}\n`,
    ],
    ["header-whole", `${d}\n`],
    [
      "header-big-meta",
      `{"type":"session","version":3,"id":"h","createdAt":0,"isSeeded":false,"meta":{"k":${big}}}\n`,
    ],
    [
      "header-extra-key",
      `{"type":"session","version":3,"id":"h","createdAt":0,"isSeeded":false,${big}:1}\n`,
    ],
    [
      "source-run-deep",
      `${HEADER_OK}\n${USER_LINE(0, "")}\n${
        USER_LINE(1, `,"sourceEventSeqs":[${d}]`)
      }\n`,
    ],
    [
      "source-run-pair-deep",
      `${HEADER_OK}\n${USER_LINE(0, "")}\n${
        USER_LINE(1, `,"sourceEventSeqs":[[0,${d}]]`)
      }\n`,
    ],
    [
      "source-run-junk",
      `${HEADER_OK}\n${USER_LINE(0, "")}\n${
        USER_LINE(
          5,
          `,"sourceEventSeqs":[[0,1],[1,2],[-0,1],[3,2],[0],[0,1,2],[1e400,2]]`,
        )
      }\n`,
    ],
    [
      "event-seq",
      `${HEADER_OK}\n{"type":"turn/start","seq":${d},"time":0,"data":{"turn":0}}\n`,
    ],
    ["event-whole", `${HEADER_OK}\n${d}\n`],
    [
      "event-deep-meta",
      `${HEADER_OK}\n{"type":"tool/result","seq":0,"time":0,"data":{"turn":0,"step":0,"message":{"id":"t","role":"user","content":[{"type":"tool-result","toolCallId":"c","content":[]}],"source":{"kind":"tool","callId":"c"}},"meta":${d}},"surfaceOp":"append"}\n`,
    ],
    [
      "event-deep-opaque",
      `${HEADER_OK}\n{"type":"x/y","seq":0,"time":0,"data":${d},"ignorable":true}\n`,
    ],
    [
      "event-big",
      `${HEADER_OK}\n${
        USER_LINE(0, "").replace(
          `"content":[]`,
          `"content":[{"type":"text","text":${big}}]`,
        )
      }\n`,
    ],
  ];
};

Deno.test("fuzz: hostile values in header and event lines", () => {
  const depths = config.runs >= 1000 ? [1000, 30000, 100000] : [30000];
  const cases = depths.flatMap((n) => hostileFiles(n));
  fuzz("reader/hostile-lines", cases.length, (rng, index) => {
    const c = cases[index];
    if (c === undefined) return;
    judgeBytes(rng, encoder.encode(c[1]));
  });
});

Deno.test("fuzz: a migrated log goes through the same checks", () => {
  const cases = hostileFiles(30000).filter(([name]) =>
    !name.startsWith("header")
  );
  const migrate: ReadOptions["migrate"] = (input) =>
    Effect.succeed({
      header: { id: "m", createdAt: 0, isSeeded: false },
      events: input.lines,
    });
  fuzz("reader/migrated", cases.length + config.runs, (rng, index) => {
    const c = cases[index];
    let text = c === undefined ? undefined : c[1];
    if (text === undefined) {
      let bytes = validBytes(rng, rng.int(1, 10));
      const name = rng.pick(MUTATOR_NAMES);
      const mutateBytes = MUTATORS[name];
      if (mutateBytes !== undefined && name !== "header") {
        bytes = mutateBytes(rng, bytes);
      }
      text = new TextDecoder().decode(bytes);
    }
    const v2 = text.replace(`"version":3`, `"version":2`);
    leavesPrototypes(() => {
      for (const recover of [false, true]) {
        const r = read(encoder.encode(v2), { recover, migrate });
        if (!r.ok) errorShape(r.error);
        else {
          assert.equal(r.log.session.surface.nextSeq, r.log.events.length);
          if (r.log.report.stoppedAt !== undefined) {
            errorShape(r.log.report.stoppedAt);
          }
        }
      }
    });
  });
});

Deno.test("fuzz: files read in 1 MiB chunks give what bytes in memory give", async () => {
  const dir = await Deno.makeTempDir({ prefix: "fuzz-reader-" });
  const cases: Uint8Array[] = [];
  fuzz("reader/file-1mib-chunks", heavyRuns(30), (rng) => {
    // Lines of about 1 MiB of multi-byte text, so that chunk boundaries fall
    // inside lines and inside characters.
    const lines = [headerLine("fuzz")];
    const count = rng.int(1, 4);
    for (let seq = 0; seq < count; seq++) {
      const unit = rng.pick(["é", "中", "😀", "a"]);
      const text = unit.repeat(
        Math.floor((1024 * 1024) / 3) + rng.int(-50, 50),
      );
      lines.push(`${JSON.stringify(user(seq, { time: 0, text }))}\n`);
    }
    let bytes: Uint8Array = encoder.encode(lines.join(""));
    const name = rng.pick([
      "none",
      "truncate",
      "bitFlip",
      "invalidUtf8",
      "crlfMix",
    ]);
    const mutateBytes = MUTATORS[name];
    if (mutateBytes !== undefined) bytes = mutateBytes(rng, bytes);
    cases.push(bytes);
  });
  for (const [i, bytes] of cases.entries()) {
    const file = `${dir}/case-${i}.jsonl`;
    await Deno.writeFile(file, bytes);
    for (const recover of [false, true]) {
      const fromFile = await Effect.runPromiseExit(
        readSessionFile(file, { recover }),
      );
      const fromBytes = read(bytes, { recover });
      assert.ok(!Exit.isFailure(fromFile) || !Cause.hasDies(fromFile.cause));
      const asRead: Read = Exit.isSuccess(fromFile)
        ? { ok: true, log: fromFile.value }
        : readFailure(fromFile.cause);
      assert.deepEqual(summary(asRead), summary(fromBytes), `case ${i}`);
    }
  }
  await Deno.remove(dir, { recursive: true });
});

const readFailure = (cause: Cause.Cause<unknown>): Read => {
  const found = Cause.findError(cause);
  assert.ok(Result.isSuccess(found));
  const e = found.success;
  assert.ok(isLogReadError(e), `not a read error: ${String(e)}`);
  return { ok: false, error: e };
};

const isLogReadError = (e: unknown): e is LogReadError =>
  typeof e === "object" && e !== null && "_tag" in e &&
  READ_TAGS.includes(String(e._tag));

Deno.test("fuzz: the mutations reach every kind of outcome", () => {
  console.log(
    [...outcomes.entries()].sort().map(([k, v]) =>
      `fuzz-reader-outcome ${k}=${v}`
    ).join("\n"),
  );
  console.log(countsReport());
  // A replayed single case reaches what it reaches.
  if (config.only !== undefined) return;
  const reached = new Set(
    [...outcomes.keys()].map((key) => key.split(":").slice(0, 2).join(":")),
  );
  for (
    const kind of [
      "served",
      "served+torn-tail",
      "stopped:CorruptLine",
      "stopped:FoldFailed",
      "stopped:LineTooLong",
      "failed:CorruptLine",
      "failed:FoldFailed",
      "failed:LineTooLong",
      "failed:MissingHeader",
      "failed:FormatTooOld",
    ]
  ) {
    assert.ok(reached.has(kind), `no case reached ${kind}`);
  }
  const inner = new Set([...outcomes.keys()].map((key) => key.split(":")[2]));
  for (const tag of ["InvalidJson", "InvalidUtf8", "InvalidHeader"]) {
    assert.ok(inner.has(tag), `no corrupt line was ${tag}`);
  }
});
