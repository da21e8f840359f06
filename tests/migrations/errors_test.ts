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

/** A migrator of a version-`version` log whose header is valid. */
const migratorAt = (version: number) =>
  Result.getOrThrow(
    makeMigrator({
      type: "session",
      version,
      id: "s",
      createdAt: 0,
      isSeeded: false,
    }),
  );

Deno.test("InvalidLegacyHeader: refusing a header with an empty id", () => {
  const made = makeMigrator({
    type: "session",
    version: 1,
    id: "",
    createdAt: 0,
    isSeeded: false,
  });
  assert.ok(Result.isFailure(made));
  assert.equal(made.failure._tag, "InvalidLegacyHeader");
  assert.equal(
    made.failure._tag === "InvalidLegacyHeader" && made.failure.reason,
    "id",
  );
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
  assert.equal(catalog.failure._tag, "DuplicateMigrationEdge");
  assert.equal(
    catalog.failure._tag === "DuplicateMigrationEdge" && catalog.failure.from,
    1,
  );
});

Deno.test("CorruptLegacyLine: migrating a file whose second line is cut off", () => {
  const dir = Deno.makeTempDirSync();
  Deno.writeTextFileSync(
    `${dir}/s.jsonl`,
    [
      '{"type":"session","version":1,"id":"s","createdAt":0,"isSeeded":false}',
      '{"type":',
      "",
    ].join("\n"),
  );
  const error = Effect.runSync(Effect.flip(migrateFile(`${dir}/s.jsonl`)));
  assert.equal(error._tag, "CorruptLegacyLine");
  assert.deepEqual(
    error._tag === "CorruptLegacyLine" && [error.line, error.excerpt],
    [2, '{"type":'],
  );
  assert.deepEqual(Deno.readDirSync(dir).toArray().map((e) => e.name), [
    "s.jsonl",
  ]);
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("InvalidLegacyEnvelope: a line that is not an event", () => {
  const migrator = migratorAt(2);
  const out = migrator.push({ seq: 0, time: 0, data: {} }, 2);
  assert.ok(Result.isFailure(out));
  assert.equal(out.failure._tag, "InvalidLegacyEnvelope");
});

Deno.test("UnknownLegacyEventType: an event type version 2 did not have", () => {
  const migrator = migratorAt(2);
  const out = migrator.push({ type: "x/y", seq: 0, time: 0, data: {} }, 2);
  assert.ok(Result.isFailure(out));
  assert.equal(out.failure._tag, "UnknownLegacyEventType");
  assert.equal(out.failure.line, 2);
});

Deno.test("MissingSurfaceMarker: a version-2 user message without surfaceOp", () => {
  const migrator = migratorAt(2);
  const out = migrator.push({
    type: "user/message",
    seq: 0,
    time: 0,
    data: { id: "u", role: "user", content: [], source: { kind: "user" } },
  }, 2);
  assert.ok(Result.isFailure(out));
  assert.equal(out.failure._tag, "MissingSurfaceMarker");
});

Deno.test("MalformedReplace: a version-1 replace written with version-3 keys", () => {
  const migrator = migratorAt(1);
  const user = (seq: number, id: string) => ({
    type: "user/message",
    seq,
    time: seq,
    data: {
      id,
      role: "user",
      content: [{ type: "text", text: id }],
      source: { kind: "user" },
    },
  });
  Result.getOrThrow(
    migrator.push(
      { type: "turn/start", seq: 0, time: 0, data: { turn: 0 } },
      2,
    ),
  );
  Result.getOrThrow(
    migrator.push({
      type: "step/start",
      seq: 1,
      time: 1,
      data: { turn: 0, step: 0 },
    }, 3),
  );
  Result.getOrThrow(
    migrator.push({ ...user(2, "u1"), surfaceOp: "append" }, 4),
  );
  const out = migrator.push({
    ...user(3, "u2"),
    surfaceOp: { op: "replace", startSeq: 2, endSeq: 2 },
    sourceEventSeqs: [2],
  }, 5);
  assert.ok(Result.isFailure(out));
  assert.equal(out.failure._tag, "MalformedReplace");
  assert.deepEqual(
    out.failure._tag === "MalformedReplace" &&
      [out.failure.line, out.failure.version],
    [5, 1],
  );
});

Deno.test("SurfaceMetadataOnLegacyLogOnly: a version-1 turn marker placed on the surface", () => {
  const migrator = migratorAt(1);
  const out = migrator.push({
    type: "turn/start",
    seq: 0,
    time: 0,
    data: { turn: 0 },
    surfaceOp: "append",
  }, 2);
  assert.ok(Result.isFailure(out));
  assert.equal(out.failure._tag, "SurfaceMetadataOnLegacyLogOnly");
  assert.equal(
    out.failure._tag === "SurfaceMetadataOnLegacyLogOnly" && out.failure.type,
    "turn/start",
  );
});

Deno.test("InvalidLegacySourceList: a version-2 message citing nothing", () => {
  const migrator = migratorAt(2);
  const out = migrator.push({
    type: "user/message",
    seq: 0,
    time: 0,
    surfaceOp: "append",
    sourceEventSeqs: [],
    data: { id: "u", role: "user", content: [], source: { kind: "user" } },
  }, 2);
  assert.ok(Result.isFailure(out));
  assert.equal(out.failure._tag, "InvalidLegacySourceList");
  assert.equal(
    out.failure._tag === "InvalidLegacySourceList" && out.failure.reason,
    "empty",
  );
});

Deno.test("InvalidLegacyEventData: a version-1 turn marker with a negative turn", () => {
  const migrator = migratorAt(1);
  const out = migrator.push({
    type: "turn/start",
    seq: 0,
    time: 0,
    data: { turn: -1 },
  }, 2);
  assert.ok(Result.isFailure(out));
  assert.equal(out.failure._tag, "InvalidLegacyEventData");
  assert.deepEqual(
    out.failure._tag === "InvalidLegacyEventData" &&
      [out.failure.line, out.failure.type, out.failure.path],
    [2, "turn/start", "turn"],
  );
});

Deno.test("LegacySeqNotDense: a log whose first event is not seq 0", () => {
  const migrator = migratorAt(2);
  const out = migrator.push({
    type: "turn/start",
    seq: 4,
    time: 0,
    data: { turn: 0 },
  }, 2);
  assert.ok(Result.isFailure(out));
  assert.equal(out.failure._tag, "LegacySeqNotDense");
  assert.deepEqual(
    out.failure._tag === "LegacySeqNotDense" &&
      [out.failure.expected, out.failure.actual],
    [0, 4],
  );
});

Deno.test("ConsumedChunkReference: a version-1 compaction that shadows a chunk folded into its message", () => {
  const lines = [
    { type: "session", version: 1, id: "s", createdAt: 0, isSeeded: false },
    { type: "turn/start", seq: 0, time: 0, data: { turn: 0 } },
    { type: "step/start", seq: 1, time: 1, data: { turn: 0, step: 0 } },
    {
      type: "assistant/chunk",
      seq: 2,
      time: 2,
      data: { turn: 0, step: 0, chunk: "a" },
    },
    {
      type: "assistant/message",
      seq: 3,
      time: 3,
      surfaceOp: "append",
      sourceEventSeqs: [2],
      data: {
        turn: 0,
        step: 0,
        message: {
          id: "a1",
          role: "assistant",
          content: [{ type: "text", text: "a" }],
          source: { kind: "model", provider: "p", model: "m" },
        },
      },
    },
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
  ];
  const error = Effect.runSync(
    Effect.flip(Stream.runCollect(migrate(Stream.fromIterable(lines)))),
  );
  assert.equal(error._tag, "ConsumedChunkReference");
  assert.deepEqual(
    error._tag === "ConsumedChunkReference" &&
      [error.line, error.chunkSeq, error.via],
    [8, 2, "shadowedSeqs"],
  );
});

Deno.test("InvalidChunkCitation: a version-1 assistant message citing a user message as its chunk", () => {
  const lines = [
    { type: "session", version: 1, id: "s", createdAt: 0, isSeeded: false },
    { type: "turn/start", seq: 0, time: 0, data: { turn: 0 } },
    { type: "step/start", seq: 1, time: 1, data: { turn: 0, step: 0 } },
    {
      type: "user/message",
      seq: 2,
      time: 2,
      surfaceOp: "append",
      data: {
        id: "u1",
        role: "user",
        content: [{ type: "text", text: "hi" }],
        source: { kind: "user" },
      },
    },
    {
      type: "assistant/message",
      seq: 3,
      time: 3,
      surfaceOp: "append",
      sourceEventSeqs: [2],
      data: {
        turn: 0,
        step: 0,
        message: {
          id: "a1",
          role: "assistant",
          content: [{ type: "text", text: "a" }],
          source: { kind: "model", provider: "p", model: "m" },
        },
      },
    },
  ];
  const error = Effect.runSync(
    Effect.flip(Stream.runCollect(migrate(Stream.fromIterable(lines)))),
  );
  assert.equal(error._tag, "InvalidChunkCitation");
  assert.deepEqual(
    error._tag === "InvalidChunkCitation" &&
      [error.line, error.source, error.reason],
    [5, 2, "not-a-chunk"],
  );
});

Deno.test("SurfaceEventBeforeFirstStep: a version-2 user message before any step", () => {
  const lines = [
    { type: "session", version: 2, id: "s", createdAt: 0, isSeeded: false },
    { type: "turn/start", seq: 0, time: 0, data: { turn: 0 } },
    {
      type: "user/message",
      seq: 1,
      time: 1,
      surfaceOp: "append",
      data: {
        id: "u1",
        role: "user",
        content: [{ type: "text", text: "hi" }],
        source: { kind: "user" },
      },
    },
  ];
  const error = Effect.runSync(
    Effect.flip(Stream.runCollect(migrate(Stream.fromIterable(lines)))),
  );
  assert.equal(error._tag, "SurfaceEventBeforeFirstStep");
  assert.deepEqual(
    error._tag === "SurfaceEventBeforeFirstStep" &&
      [error.line, error.seq, error.type],
    [3, 1, "user/message"],
  );
});

Deno.test("PromptChangeOutsideStep: a version-2 system prompt set between steps", () => {
  const header = (seq: number, system: string) => ({
    type: "request/header",
    seq,
    time: seq,
    data: {
      header: { config: { provider: "p", model: "m" }, system },
      reason: { kind: "step" },
    },
  });
  const lines = [
    { type: "session", version: 2, id: "s", createdAt: 0, isSeeded: false },
    { type: "turn/start", seq: 0, time: 0, data: { turn: 0 } },
    { type: "step/start", seq: 1, time: 1, data: { turn: 0, step: 0 } },
    header(2, "A"),
    { type: "step/end", seq: 3, time: 3, data: { turn: 0, step: 0 } },
    header(4, "B"),
  ];
  const error = Effect.runSync(
    Effect.flip(Stream.runCollect(migrate(Stream.fromIterable(lines)))),
  );
  assert.equal(error._tag, "PromptChangeOutsideStep");
  assert.deepEqual(
    error._tag === "PromptChangeOutsideStep" && [error.line, error.seq],
    [6, 4],
  );
});

Deno.test("SyntheticIdCollision: a version-2 message that already has the id the migration would give the system message", () => {
  // The system message is inserted for the first step/start, seq 1.
  const id = syntheticSystemId("s", 1);
  const lines = [
    { type: "session", version: 2, id: "s", createdAt: 0, isSeeded: false },
    { type: "turn/start", seq: 0, time: 0, data: { turn: 0 } },
    { type: "step/start", seq: 1, time: 1, data: { turn: 0, step: 0 } },
    {
      type: "user/message",
      seq: 2,
      time: 2,
      surfaceOp: "append",
      data: {
        id,
        role: "user",
        content: [{ type: "text", text: "hi" }],
        source: { kind: "user" },
      },
    },
  ];
  const error = Effect.runSync(
    Effect.flip(Stream.runCollect(migrate(Stream.fromIterable(lines)))),
  );
  assert.equal(error._tag, "SyntheticIdCollision");
  assert.deepEqual(
    error._tag === "SyntheticIdCollision" && [error.line, error.id],
    [4, id],
  );
});

Deno.test("MigratedEventRejected: opening a version-2 log whose replace starts off the surface", () => {
  const log = [
    '{"type":"session","version":2,"id":"s","createdAt":0,"isSeeded":false}',
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
  assert.equal(error._tag, "MigratedEventRejected");
  assert.deepEqual(
    error._tag === "MigratedEventRejected" && [error.line, error.tag],
    [4, "ReplaceStartNotOnSurface"],
  );
});

Deno.test("MigrationTargetExists: migrating to a path that is taken", () => {
  const dir = Deno.makeTempDirSync();
  Deno.writeTextFileSync(
    `${dir}/s.jsonl`,
    '{"type":"session","version":2,"id":"s","createdAt":0,"isSeeded":false}\n',
  );
  Deno.writeTextFileSync(`${dir}/s.v3.jsonl`, "keep me");
  const error = Effect.runSync(Effect.flip(migrateFile(`${dir}/s.jsonl`)));
  assert.equal(error._tag, "MigrationTargetExists");
  assert.equal(
    error._tag === "MigrationTargetExists" && error.path,
    `${dir}/s.v3.jsonl`,
  );
  assert.equal(Deno.readTextFileSync(`${dir}/s.v3.jsonl`), "keep me");
  Deno.removeSync(dir, { recursive: true });
});

Deno.test("MigrationIoError: migrating a file that does not exist", () => {
  const dir = Deno.makeTempDirSync();
  const error = Effect.runSync(
    Effect.flip(migrateFile(`${dir}/missing.jsonl`)),
  );
  assert.equal(error._tag, "MigrationIoError");
  assert.deepEqual(
    error._tag === "MigrationIoError" &&
      [error.path, error.operation, error.reason],
    [`${dir}/missing.jsonl`, "open", "ENOENT"],
  );
  Deno.removeSync(dir, { recursive: true });
});
