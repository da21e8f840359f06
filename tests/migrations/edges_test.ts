import assert from "node:assert/strict";
import { Result } from "effect";
import {
  type EdgeOutput,
  type MigrationEdge,
  type MigrationError,
  syntheticSystemId,
  v0ToV1,
  v1ToV2,
} from "../../migrations/mod.ts";
import { errorOf, ev, eventsOf, given, sessionId } from "./_helpers.ts";
import { thenFails } from "../_helpers/then.ts";

/** Run one edge over events (seqs and times assigned densely) and collect its output. */
const runEdge = (
  edge: MigrationEdge,
  events: ReadonlyArray<Record<string, unknown>>,
): Result.Result<ReadonlyArray<EdgeOutput>, MigrationError> => {
  const run = edge.start({
    type: "session",
    version: edge.from,
    id: sessionId,
    createdAt: 0,
    isSeeded: false,
  });
  const out: Array<EdgeOutput> = [];
  for (let i = 0; i < events.length; i++) {
    const r = run.push({ seq: i, time: 1000 + i, ...events[i] }, i + 2);
    if (Result.isFailure(r)) return Result.fail(r.failure);
    out.push(...r.success);
  }
  const end = run.end();
  if (Result.isFailure(end)) return Result.fail(end.failure);
  out.push(...end.success);
  return Result.succeed(out);
};

const emitted = (
  edge: MigrationEdge,
  events: ReadonlyArray<Record<string, unknown>>,
) => {
  const r = runEdge(edge, events);
  if (Result.isFailure(r)) {
    throw new Error(`Refused: ${JSON.stringify(r.failure)}`);
  }
  return r.success;
};

const refused = (
  edge: MigrationEdge,
  events: ReadonlyArray<Record<string, unknown>>,
) => {
  const r = runEdge(edge, events);
  if (Result.isSuccess(r)) throw new Error("Expected a refusal");
  return r.failure;
};

Deno.test("v0ToV1", async (t) => {
  await t.step(
    "renames steering/message and compact/* and keeps everything else",
    () => {
      const out = emitted(v0ToV1, [
        ev.turnStart(),
        ev.stepStart(),
        { ...ev.user("s"), type: "steering/message" },
        { type: "compact/start", data: { compactionId: "k", turn: 0 } },
        {
          type: "compact/summary",
          data: { compactionId: "k", summary: "s", shadowedSeqs: [2] },
        },
        { type: "compact/prune", data: { shadowedSeqs: [2] } },
        { type: "compact/end", data: { compactionId: "k" } },
        ev.user("u"),
      ]);
      assert.deepEqual(
        out.map((o) => [o.line, o.event["seq"], o.event["type"]]),
        [
          [2, 0, "turn/start"],
          [3, 1, "step/start"],
          [4, 2, "user/message"],
          [5, 3, "compaction/start"],
          [6, 4, "compaction/summary"],
          [7, 5, "compaction/prune"],
          [8, 6, "compaction/end"],
          [9, 7, "user/message"],
        ],
      );
      assert.deepEqual(out[2]?.event["data"], ev.user("s")["data"]);
    },
  );
  await t.step("refuses seqs that are not dense with LegacySeqNotDense", () => {
    const r = v0ToV1.start({
      type: "session",
      version: 0,
      id: "s",
      createdAt: 0,
      isSeeded: false,
    });
    const out = r.push({ ...ev.turnStart(), seq: 1, time: 0 }, 2);
    assert.ok(Result.isFailure(out));
    thenFails(out.failure, "LegacySeqNotDense", { expected: 0 });
  });
});

Deno.test("v1ToV2", async (t) => {
  await t.step(
    "embeds cited chunks as the stream, with each chunk's time, and drops the sources",
    () => {
      const out = emitted(v1ToV2, [
        ...ev.chunks("a", "b"),
        ev.assistantV1("m", [0, 1]),
      ]);
      assert.equal(out.length, 1);
      const event = out[0]?.event;
      assert.equal(event?.["seq"], 0);
      assert.equal("sourceEventSeqs" in (event ?? {}), false);
      assert.deepEqual(event?.["data"], {
        turn: 0,
        step: 0,
        message: {
          id: "m",
          role: "assistant",
          content: [{ type: "text", text: "m" }],
          source: { kind: "model", provider: "p", model: "m" },
        },
        stream: [{ time: 1000, chunk: "a" }, { time: 1001, chunk: "b" }],
      });
    },
  );
  await t.step("a message without sources gets an empty stream", () => {
    const out = emitted(v1ToV2, [ev.assistantV1("m")]);
    const data = out[0]?.event["data"];
    assert.deepEqual(
      typeof data === "object" && data !== null && "stream" in data &&
        data.stream,
      [],
    );
  });
  await t.step(
    "unclaimed chunks become one attempt before the message that claims the others",
    () => {
      const out = emitted(v1ToV2, [
        ...ev.chunks("a", "b", "c"),
        ev.assistantV1("m", [1]),
      ]);
      assert.deepEqual(
        out.map((o) => [o.line, o.event["seq"], o.event["type"]]),
        [
          [4, 0, "assistant/attempt"],
          [5, 1, "assistant/message"],
        ],
      );
      assert.deepEqual(out[0]?.event["data"], {
        turn: 0,
        step: 0,
        stream: [{ time: 1000, chunk: "a" }, { time: 1002, chunk: "c" }],
      });
      assert.equal(out[0]?.event["time"], 1002);
    },
  );
  await t.step(
    "unclaimed chunks become an attempt at the next non-chunk event",
    () => {
      const out = emitted(v1ToV2, [
        ev.chunk("a"),
        ev.header(),
        ev.chunk("b"),
        ev.assistantV1("m", [2]),
      ]);
      assert.deepEqual(out.map((o) => [o.event["seq"], o.event["type"]]), [
        [0, "assistant/attempt"],
        [1, "request/header"],
        [2, "assistant/message"],
      ]);
    },
  );
  await t.step("a change of step closes the run of chunks", () => {
    const out = emitted(v1ToV2, [
      ev.chunk("a", 0, 0),
      ev.chunk("b", 0, 1),
      ev.assistantV1("m", [1], 0, 1),
    ]);
    assert.deepEqual(out.map((o) => [o.event["type"], o.line]), [
      ["assistant/attempt", 2],
      ["assistant/message", 4],
    ]);
  });
  await t.step("chunks pending at the end become an attempt", () => {
    const out = emitted(v1ToV2, [ev.turnStart(), ev.chunk("a")]);
    assert.deepEqual(out.map((o) => o.event["type"]), [
      "turn/start",
      "assistant/attempt",
    ]);
  });
  await t.step(
    "renumbers densely and rewrites endpoints, sources and shadowedSeqs",
    () => {
      const out = emitted(v1ToV2, [
        ev.user("u0"), // 0 -> 0
        ev.chunk("a"), // 1 -> consumed
        ev.assistantV1("m", [1]), // 2 -> 1
        { type: "compaction/start", data: { compactionId: "k", turn: 0 } }, // 3 -> 2
        {
          type: "compaction/summary",
          data: { compactionId: "k", summary: "s", shadowedSeqs: [0, 2] },
        }, // 4 -> 3
        ev.user("s", {
          surfaceOp: { op: "replace", start: 0, end: 2 },
          sourceEventSeqs: [3, 4, 0, 2],
        }), // 5 -> 4
      ]);
      assert.deepEqual(out[3]?.event["data"], {
        compactionId: "k",
        summary: "s",
        shadowedSeqs: [0, 1],
      });
      assert.deepEqual(out[4]?.event["surfaceOp"], {
        op: "replace",
        start: 0,
        end: 1,
      });
      assert.deepEqual(out[4]?.event["sourceEventSeqs"], [2, 3, 0, 1]);
    },
  );
  const refusals: ReadonlyArray<
    readonly [
      string,
      ReadonlyArray<Record<string, unknown>>,
      "ConsumedChunkReference" | "InvalidChunkCitation",
      Record<string, unknown>,
    ]
  > = [
    [
      "refuses a replace endpoint on a chunk with ConsumedChunkReference",
      [
        ev.chunk("a"),
        ev.assistantV1("m", [0]),
        ev.user("u", {
          surfaceOp: { op: "replace", start: 0, end: 1 },
          sourceEventSeqs: [0, 1],
        }),
      ],
      "ConsumedChunkReference",
      { line: 4, seq: 2, chunkSeq: 0, via: "surfaceOp" },
    ],
    [
      "refuses a chunk claimed by an earlier message with ConsumedChunkReference",
      [ev.chunk("a"), ev.assistantV1("m", [0]), ev.assistantV1("n", [0])],
      "ConsumedChunkReference",
      { line: 4, seq: 2, chunkSeq: 0, via: "sourceEventSeqs" },
    ],
    [
      "refuses an opaque event citing a chunk with ConsumedChunkReference",
      [ev.chunk("a"), {
        type: "x/note",
        data: {},
        ignorable: true,
        sourceEventSeqs: [0],
      }],
      "ConsumedChunkReference",
      { line: 3, seq: 1, chunkSeq: 0, via: "sourceEventSeqs" },
    ],
    [
      "refuses a message citing a non-chunk with InvalidChunkCitation",
      [ev.user("u"), ev.assistantV1("m", [0])],
      "InvalidChunkCitation",
      { line: 3, seq: 1, source: 0, reason: "not-a-chunk" },
    ],
  ];
  for (const [name, events, tag, fields] of refusals) {
    await t.step(name, () => {
      thenFails(refused(v1ToV2, events), tag, fields);
    });
  }
});

const types = (events: ReadonlyArray<Record<string, unknown>>) =>
  events.map((e) => e["type"]);
const systems = (events: ReadonlyArray<Record<string, unknown>>) =>
  events.filter((e) => e["type"] === "system/message");

Deno.test("v2 -> v3", async (t) => {
  await t.step("inserts the empty head after the first step/start only", () => {
    const out = eventsOf(
      given(2, [
        ev.turnStart(),
        ev.stepStart(),
        ev.stepEnd(),
        ev.stepStart(0, 1),
      ]),
    );
    assert.deepEqual(types(out), [
      "turn/start",
      "step/start",
      "system/message",
      "step/end",
      "step/start",
    ]);
    assert.deepEqual(out[2], {
      type: "system/message",
      seq: 2,
      time: 1001,
      data: {
        turn: 0,
        step: 0,
        message: {
          id: syntheticSystemId(sessionId, 1),
          role: "system",
          content: [],
          source: { kind: "plugin", plugin: "system-prompt" },
        },
      },
      surfaceOp: "append",
    });
  });
  await t.step(
    "replaces the head before a header whose prompt changed, citing it",
    () => {
      const out = eventsOf(
        given(2, [ev.turnStart(), ev.stepStart(0, 4), ev.header("A")]),
      );
      assert.deepEqual(out[3], {
        type: "system/message",
        seq: 3,
        time: 1002,
        data: {
          turn: 0,
          step: 4,
          message: {
            id: syntheticSystemId(sessionId, 2),
            role: "system",
            content: [{ type: "text", text: "A" }],
            source: { kind: "plugin", plugin: "system-prompt" },
          },
        },
        surfaceOp: { op: "replace", startSeq: 2, endSeq: 2 },
        sourceEventSeqs: [2],
      });
      assert.deepEqual(out[4]?.["data"], {
        header: { config: { provider: "p", model: "m" } },
        reason: "step",
      });
    },
  );
  await t.step(
    "an unchanged prompt and an absent one when there is none insert nothing",
    () => {
      const out = eventsOf(
        given(2, [
          ev.turnStart(),
          ev.stepStart(),
          ev.header(),
          ev.header(""),
          ev.header("A"),
          ev.header("A"),
        ]),
      );
      assert.equal(systems(out).length, 2);
    },
  );
  await t.step(
    "removing the prompt inserts an empty-content replacement",
    () => {
      const out = eventsOf(
        given(2, [ev.turnStart(), ev.stepStart(), ev.header("A"), ev.header()]),
      );
      const last = systems(out).at(-1)?.["data"];
      assert.deepEqual(
        typeof last === "object" && last !== null && "message" in last &&
          typeof last.message === "object" && last.message !== null &&
          "content" in last.message &&
          last.message.content,
        [],
      );
    },
  );
  await t.step("keeps opaque events as they are but for their seq", () => {
    const note = {
      type: "x/note",
      data: { keep: [1, { a: null }] },
      ignorable: true,
    };
    const out = eventsOf(given(2, [ev.turnStart(), ev.stepStart(), note]));
    assert.deepEqual(out[3], { ...note, seq: 3, time: 1002 });
  });
  await t.step("accepts an empty prompt before the first step", () => {
    assert.equal(
      eventsOf(given(2, [ev.header(""), ev.turnStart(), ev.stepStart()]))
        .length,
      4,
    );
  });
  const later = syntheticSystemId(sessionId, 3);
  const earlier = syntheticSystemId(sessionId, 1);
  const refusals: ReadonlyArray<
    readonly [
      string,
      ReadonlyArray<Record<string, unknown>>,
      | "PromptChangeOutsideStep"
      | "SurfaceEventBeforeFirstStep"
      | "SyntheticIdCollision",
      Record<string, unknown>,
    ]
  > = [
    [
      "refuses a prompt before the first step with PromptChangeOutsideStep",
      [ev.header("A")],
      "PromptChangeOutsideStep",
      { line: 2, seq: 0 },
    ],
    [
      "refuses a prompt change after turn/end with PromptChangeOutsideStep",
      [ev.turnStart(), ev.stepStart(), ev.turnEnd(), ev.header("A")],
      "PromptChangeOutsideStep",
      { line: 5, seq: 3 },
    ],
    [
      "refuses a surface event before the first step with SurfaceEventBeforeFirstStep",
      [ev.turnStart(), ev.user("u")],
      "SurfaceEventBeforeFirstStep",
      { line: 3, seq: 1, type: "user/message" },
    ],
    [
      "refuses a message id a later synthetic message takes with SyntheticIdCollision",
      [ev.turnStart(), ev.stepStart(), ev.user(later), ev.header("A")],
      "SyntheticIdCollision",
      { line: 5, seq: 3, id: later },
    ],
    [
      "refuses a message id an earlier synthetic message took with SyntheticIdCollision",
      [ev.turnStart(), ev.stepStart(), ev.user(earlier)],
      "SyntheticIdCollision",
      { line: 4, seq: 2, id: earlier },
    ],
  ];
  for (const [name, events, tag, fields] of refusals) {
    await t.step(name, () => {
      thenFails(errorOf(given(2, events)), tag, fields);
    });
  }
  await t.step(
    "synthetic ids depend on the session id and the anchor seq only",
    () => {
      assert.equal(syntheticSystemId("a", 1), syntheticSystemId("a", 1));
      assert.notEqual(syntheticSystemId("a", 1), syntheticSystemId("b", 1));
      assert.match(syntheticSystemId("a", 1), /^migrated-system-[0-9a-f]{16}$/);
    },
  );
  await t.step(
    "refuses a v2 log that breaks a relational rule with MigratedEventRejected",
    () => {
      const out = given(2, [
        ev.turnStart(),
        ev.stepStart(),
        ev.user("u", {
          surfaceOp: { op: "replace", start: 0, end: 0 },
          sourceEventSeqs: [0],
        }),
      ]);
      thenFails(errorOf(out), "MigratedEventRejected", {
        line: 4,
        seq: 3,
        tag: "ReplaceStartNotOnSurface",
      });
    },
  );
});
