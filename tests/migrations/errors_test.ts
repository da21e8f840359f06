/**
 * The refusals of the migration chain, one per class of
 * `migrations/errors.ts`: each is provoked through the public API and
 * checked by its tag and fields (these were the classes' doc examples).
 */
import {
  catalogMigration,
  makeCatalog,
  makeMigrator,
  migrate,
  migrateFile,
  syntheticSystemId,
  v0ToV1,
  v1ToV2,
  v2ToV3,
} from "@palimpsest/session/migrations";
import { Effect, Result, Stream } from "effect";
import assert from "node:assert/strict";
import { readSessionBytes } from "@palimpsest/session/jsonl";
import { thenFails } from "../_helpers/then.ts";
import { ev } from "./_helpers.ts";

/** A version-`version` header line. */
const header = (version: number) => ({
  type: "session",
  version,
  id: "s",
  createdAt: 0,
  isSeeded: false,
});

/** A migrator of a version-`version` log whose header is valid. */
const migratorAt = (version: number) =>
  Result.getOrThrow(makeMigrator(header(version)));

/** `turn/start` of turn 0 at `seq`. */
const turnStart = (seq = 0) => ({
  type: "turn/start",
  seq,
  time: seq,
  data: { turn: 0 },
});

/** `step/start` of step 0 at `seq`. */
const stepStart = (seq: number) => ({
  type: "step/start",
  seq,
  time: seq,
  data: { turn: 0, step: 0 },
});

/** A `user/message` line with `extra` envelope keys (appended by default). */
const userLine = (
  seq: number,
  id: string,
  options: { readonly text?: string; readonly extra?: object } = {},
) => ({
  type: "user/message",
  seq,
  time: seq,
  data: {
    id,
    role: "user",
    content: options.text === undefined
      ? []
      : [{ type: "text", text: options.text }],
    source: { kind: "user" },
  },
  ...(options.extra ?? { surfaceOp: "append" }),
});

/** A version-1 assistant message at seq 3 citing seq 2 as its chunk. */
const assistantCitingSeq2 = { ...ev.assistantV1("a1", [2]), seq: 3, time: 3 };

/** The refusal of `line`, pushed as line 2 of a version-`version` log. */
const pushRefusal = (version: number, line: unknown) => {
  const out = migratorAt(version).push(line, 2);
  assert.ok(Result.isFailure(out));
  return out.failure;
};

/** The refusal of migrating `lines` as a stream. */
const migrateRefusal = (lines: ReadonlyArray<unknown>) =>
  Effect.runSync(
    Effect.flip(Stream.runCollect(migrate(Stream.fromIterable(lines)))),
  );

/** Runs `body` in a fresh temporary directory, removed afterwards. */
const inTempDir = (body: (dir: string) => void) => {
  const dir = Deno.makeTempDirSync();
  body(dir);
  Deno.removeSync(dir, { recursive: true });
};

Deno.test("InvalidLegacyHeader: refusing a header with an empty id", () => {
  const made = makeMigrator({ ...header(1), id: "" });
  assert.ok(Result.isFailure(made));
  assert.equal(thenFails(made.failure, "InvalidLegacyHeader").reason, "id");
});

Deno.test("MissingMigrationEdge: a catalog without the v1 → v2 edge", () => {
  const catalog = makeCatalog([v0ToV1, v2ToV3]);
  assert.ok(Result.isFailure(catalog));
  assert.equal(catalog.failure._tag, "MissingMigrationEdge");
  assert.deepEqual([catalog.failure.from, catalog.failure.to], [1, 3]);
});

Deno.test("DuplicateMigrationEdge: a catalog given the v1 → v2 edge twice", () => {
  const catalog = makeCatalog([v0ToV1, v1ToV2, v1ToV2, v2ToV3]);
  assert.ok(Result.isFailure(catalog));
  assert.equal(thenFails(catalog.failure, "DuplicateMigrationEdge").from, 1);
});

Deno.test("CorruptLegacyLine: migrating a file whose second line is cut off", () => {
  inTempDir((dir) => {
    Deno.writeTextFileSync(
      `${dir}/s.jsonl`,
      [JSON.stringify(header(1)), '{"type":', ""].join("\n"),
    );
    const error = Effect.runSync(Effect.flip(migrateFile(`${dir}/s.jsonl`)));
    const corrupt = thenFails(error, "CorruptLegacyLine");
    assert.deepEqual([corrupt.line, corrupt.excerpt], [2, '{"type":']);
    assert.deepEqual(Deno.readDirSync(dir).toArray().map((e) => e.name), [
      "s.jsonl",
    ]);
  });
});

Deno.test("InvalidLegacyEnvelope: a line that is not an event", () => {
  thenFails(
    pushRefusal(2, { seq: 0, time: 0, data: {} }),
    "InvalidLegacyEnvelope",
  );
});

Deno.test("UnknownLegacyEventType: an event type version 2 did not have", () => {
  const error = pushRefusal(2, { type: "x/y", seq: 0, time: 0, data: {} });
  assert.equal(thenFails(error, "UnknownLegacyEventType").line, 2);
});

Deno.test("MissingSurfaceMarker: a version-2 user message without surfaceOp", () => {
  thenFails(
    pushRefusal(2, userLine(0, "u", { extra: {} })),
    "MissingSurfaceMarker",
  );
});

Deno.test("MalformedReplace: a version-1 replace written with version-3 keys", () => {
  const migrator = migratorAt(1);
  Result.getOrThrow(migrator.push(turnStart(), 2));
  Result.getOrThrow(migrator.push(stepStart(1), 3));
  Result.getOrThrow(migrator.push(userLine(2, "u1", { text: "u1" }), 4));
  const out = migrator.push(
    userLine(3, "u2", {
      text: "u2",
      extra: {
        surfaceOp: { op: "replace", startSeq: 2, endSeq: 2 },
        sourceEventSeqs: [2],
      },
    }),
    5,
  );
  assert.ok(Result.isFailure(out));
  const error = thenFails(out.failure, "MalformedReplace");
  assert.deepEqual([error.line, error.version], [5, 1]);
});

Deno.test("SurfaceMetadataOnLegacyLogOnly: a version-1 turn marker placed on the surface", () => {
  const error = pushRefusal(1, { ...turnStart(), surfaceOp: "append" });
  assert.equal(
    thenFails(error, "SurfaceMetadataOnLegacyLogOnly").type,
    "turn/start",
  );
});

Deno.test("InvalidLegacySourceList: a version-2 message citing nothing", () => {
  const error = pushRefusal(
    2,
    userLine(0, "u", { extra: { surfaceOp: "append", sourceEventSeqs: [] } }),
  );
  assert.equal(thenFails(error, "InvalidLegacySourceList").reason, "empty");
});

Deno.test("InvalidLegacyEventData: a version-1 turn marker with a negative turn", () => {
  thenFails(
    pushRefusal(1, { ...turnStart(), data: { turn: -1 } }),
    "InvalidLegacyEventData",
    { line: 2, type: "turn/start", path: "turn" },
  );
});

Deno.test("LegacySeqNotDense: a log whose first event is not seq 0", () => {
  thenFails(
    pushRefusal(2, { ...turnStart(), seq: 4 }),
    "LegacySeqNotDense",
    { expected: 0, actual: 4 },
  );
});

Deno.test("ConsumedChunkReference: a version-1 compaction that shadows a chunk folded into its message", () => {
  thenFails(
    migrateRefusal([
      header(1),
      turnStart(),
      stepStart(1),
      {
        type: "assistant/chunk",
        seq: 2,
        time: 2,
        data: { turn: 0, step: 0, chunk: "a" },
      },
      assistantCitingSeq2,
      { type: "step/end", seq: 4, time: 4, data: { turn: 0, step: 0 } },
      {
        type: "compaction/start",
        seq: 5,
        time: 5,
        data: { compactionId: "k", turn: 0 },
      },
      {
        type: "compaction/summary",
        seq: 6,
        time: 6,
        data: { compactionId: "k", summary: "s", shadowedSeqs: [2] },
      },
    ]),
    "ConsumedChunkReference",
    { line: 8, chunkSeq: 2, via: "shadowedSeqs" },
  );
});

Deno.test("InvalidChunkCitation: a version-1 assistant message citing a user message as its chunk", () => {
  thenFails(
    migrateRefusal([
      header(1),
      turnStart(),
      stepStart(1),
      userLine(2, "u1", { text: "hi" }),
      assistantCitingSeq2,
    ]),
    "InvalidChunkCitation",
    { line: 5, source: 2, reason: "not-a-chunk" },
  );
});

Deno.test("SurfaceEventBeforeFirstStep: a version-2 user message before any step", () => {
  thenFails(
    migrateRefusal([header(2), turnStart(), userLine(1, "u1", { text: "hi" })]),
    "SurfaceEventBeforeFirstStep",
    { line: 3, seq: 1, type: "user/message" },
  );
});

Deno.test("PromptChangeOutsideStep: a version-2 system prompt set between steps", () => {
  const requestHeader = (seq: number, system: string) => ({
    type: "request/header",
    seq,
    time: seq,
    data: {
      header: { config: { provider: "p", model: "m" }, system },
      reason: { kind: "step" },
    },
  });
  thenFails(
    migrateRefusal([
      header(2),
      turnStart(),
      stepStart(1),
      requestHeader(2, "A"),
      { type: "step/end", seq: 3, time: 3, data: { turn: 0, step: 0 } },
      requestHeader(4, "B"),
    ]),
    "PromptChangeOutsideStep",
    { line: 6, seq: 4 },
  );
});

Deno.test("SyntheticIdCollision: a version-2 message that already has the id the migration would give the system message", () => {
  // The system message is inserted for the first step/start, seq 1.
  const id = syntheticSystemId("s", 1);
  thenFails(
    migrateRefusal([
      header(2),
      turnStart(),
      stepStart(1),
      userLine(2, id, { text: "hi" }),
    ]),
    "SyntheticIdCollision",
    { line: 4, id: id },
  );
});

Deno.test("MigratedEventRejected: opening a version-2 log whose replace starts off the surface", () => {
  const log = [
    JSON.stringify(header(2)),
    '{"type":"turn/start","seq":0,"time":0,"data":{"turn":0}}',
    '{"type":"step/start","seq":1,"time":1,"data":{"turn":0,"step":0}}',
    '{"type":"user/message","seq":2,"time":2,"data":{"id":"u1","role":"user","content":[],"source":{"kind":"user"}},' +
    '"surfaceOp":{"op":"replace","start":1,"end":1},"sourceEventSeqs":[1]}',
    "",
  ].join("\n");
  const error = Effect.runSync(Effect.flip(
    readSessionBytes(new TextEncoder().encode(log), {
      migrate: catalogMigration,
    }),
  ));
  const rejected = thenFails(error, "MigratedEventRejected");
  assert.deepEqual(
    [rejected.line, rejected.tag],
    [4, "ReplaceStartNotOnSurface"],
  );
});

Deno.test("TargetExists: migrating to a path that is taken", () => {
  inTempDir((dir) => {
    Deno.writeTextFileSync(`${dir}/s.jsonl`, `${JSON.stringify(header(2))}\n`);
    Deno.writeTextFileSync(`${dir}/s.v3.jsonl`, "keep me");
    const error = Effect.runSync(Effect.flip(migrateFile(`${dir}/s.jsonl`)));
    assert.equal(
      thenFails(error, "TargetExists").path,
      `${dir}/s.v3.jsonl`,
    );
    assert.equal(Deno.readTextFileSync(`${dir}/s.v3.jsonl`), "keep me");
  });
});

Deno.test("FileIoError: migrating a file that does not exist", () => {
  inTempDir((dir) => {
    const error = thenFails(
      Effect.runSync(Effect.flip(migrateFile(`${dir}/missing.jsonl`))),
      "FileIoError",
    );
    assert.deepEqual(
      [error.path, error.operation, error.code],
      [`${dir}/missing.jsonl`, "open", "ENOENT"],
    );
  });
});
