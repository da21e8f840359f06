/**
 * Totality of the migration chain on hostile input: small v0–v3 logs with one
 * field of one line (or the header) replaced by random JSON or by a 30k-deep
 * value, migrated in memory. Every run ends in migrated records or in a
 * tagged failure, never a defect; prototypes are untouched. What a migration
 * should produce is the migrations suite's concern, not this one's.
 */
import assert from "node:assert/strict";
import { Cause, Effect, Exit, Result, Stream } from "effect";
import { migrate } from "@palimpsest/session/migrations";
import {
  config,
  countsReport,
  fuzz,
  leavesPrototypes,
} from "../_helpers/fuzz.ts";
import { clone, jsonValue, type Obj } from "../_helpers/fuzz_logs.ts";

const DEPTH = 30000;
const deepArray: unknown = JSON.parse(
  `${"[".repeat(DEPTH)}{"toJSON":1}${"]".repeat(DEPTH)}`,
);
const deepObject: unknown = JSON.parse(
  `${`{"a":`.repeat(DEPTH)}1${"}".repeat(DEPTH)}`,
);

const user = (id: string): Obj => ({
  id,
  role: "user",
  content: [{ type: "text", text: "hi" }],
  source: { kind: "user" },
});

/** A small log mixing the spellings of every version. */
const legacyLines = (): Obj[] => [
  { type: "turn/start", seq: 0, time: 1, data: { turn: 0 } },
  { type: "step/start", seq: 1, time: 2, data: { turn: 0, step: 0 } },
  {
    type: "request/header",
    seq: 2,
    time: 3,
    data: {
      header: { config: { provider: "p", model: "m" }, system: "Be brief" },
      reason: null,
    },
  },
  {
    type: "user/message",
    seq: 3,
    time: 3,
    data: user("u0"),
    surfaceOp: "append",
  },
  {
    type: "steering/message",
    seq: 4,
    time: 4,
    data: user("u1"),
    surfaceOp: "append",
  },
  {
    type: "assistant/chunk",
    seq: 5,
    time: 5,
    data: { turn: 0, step: 0, chunk: { delta: "a" } },
  },
  {
    type: "user/message",
    seq: 6,
    time: 6,
    data: user("s"),
    surfaceOp: { op: "replace", start: 3, end: 4 },
    sourceEventSeqs: [3, 4],
  },
  { type: "compact/prune", seq: 7, time: 7, data: { shadowedSeqs: [3] } },
];

const tags = new Map<string, number>();

Deno.test("fuzz: migrating hostile legacy logs ends in records or a tagged error", () => {
  const keys = [
    "seq",
    "type",
    "data",
    "surfaceOp",
    "sourceEventSeqs",
    "time",
    "x",
    "ignorable",
  ];
  const headerKeys = ["id", "createdAt", "version", "meta", "isSeeded", "type"];
  fuzz("migrations/hostile-lines", config.runs * 4, (rng, index) => {
    const version = index % 4;
    const header: Obj = {
      type: "session",
      version,
      id: "s",
      createdAt: 0,
      isSeeded: false,
    };
    const lines: Obj[] = [header, ...legacyLines().map((l) => clone(l))];
    const junk = (): unknown =>
      rng.chance(0.1)
        ? rng.chance(0.5) ? deepArray : deepObject
        : jsonValue(rng, 3);
    if (rng.chance(0.2)) header[rng.pick(headerKeys)] = junk();
    else {
      const line = lines[rng.int(1, lines.length - 1)];
      if (line !== undefined) line[rng.pick(keys)] = junk();
    }
    const exit = leavesPrototypes(() =>
      Effect.runSyncExit(Stream.runCollect(migrate(Stream.fromIterable(lines))))
    );
    if (Exit.isSuccess(exit)) {
      tags.set("migrated", (tags.get("migrated") ?? 0) + 1);
      return;
    }
    assert.ok(!Cause.hasDies(exit.cause), Cause.pretty(exit.cause));
    const found = Cause.findError(exit.cause);
    assert.ok(Result.isSuccess(found));
    const error: unknown = found.success;
    assert.ok(typeof error === "object" && error !== null && "_tag" in error);
    const tag = String(error._tag);
    tags.set(tag, (tags.get(tag) ?? 0) + 1);
  });
  console.log(
    [...tags.entries()].sort().map(([k, v]) =>
      `fuzz-migration-outcome ${k}=${v}`
    )
      .join("\n"),
  );
  console.log(countsReport());
});
