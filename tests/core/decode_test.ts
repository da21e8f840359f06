import assert from "node:assert/strict";
import { Effect, Result, Schema } from "effect";
import { type EventDecodeError, makeVocabulary } from "@palimpsest/session";
import {
  decodeEvent,
  type DecodeOptions,
  isOpaqueEvent,
} from "@palimpsest/session/schema";
import { decodeEventResult, encodeEvent } from "@palimpsest/session/schema";
import {
  assistant,
  decoded,
  logOnly,
  opaque,
  type Raw,
  replace,
  system,
  toolCall,
  toolResult,
  turnStart,
  user,
} from "../_helpers/build.ts";
import { type FieldsOf, thenFails } from "../_helpers/then.ts";

const decodeFails = <T extends EventDecodeError["_tag"]>(
  raw: unknown,
  tag: T,
  fields?: FieldsOf<EventDecodeError, T>,
  options?: DecodeOptions,
): Extract<EventDecodeError, { readonly _tag: T }> => {
  const result = decodeEventResult(raw, options);
  if (Result.isSuccess(result)) {
    assert.fail(`Expected ${tag} but the value decoded`);
  }
  return thenFails(result.failure, tag, fields);
};

const decodes = (raw: unknown, options?: DecodeOptions): void => {
  const result = decodeEventResult(raw, options);
  if (Result.isFailure(result)) {
    assert.fail(`Expected the value to decode but got ${result.failure._tag}`);
  }
};

const without = (raw: Raw, key: string): Raw => {
  const copy = { ...raw };
  delete copy[key];
  return copy;
};

/** `raw` with keys of its data replaced by `patch`. */
const withData = (raw: Raw, patch: Raw): Raw => ({
  ...raw,
  data: { ...(raw.data as Raw), ...patch },
});

/** `raw` with keys of its data's message replaced by `patch`. */
const withMessage = (raw: Raw, patch: Raw): Raw =>
  withData(raw, {
    message: { ...((raw.data as Raw).message as Raw), ...patch },
  });

/** Builds an array with a hole at `index`. */
const withHole = (values: ReadonlyArray<number>, index: number): number[] => {
  const out: number[] = [];
  values.forEach((v, i) => {
    if (i !== index) out[i] = v;
  });
  return out;
};

const BAD_SEQS: ReadonlyArray<readonly [string, unknown]> = [
  ["negative", -1],
  ["fractional", 1.5],
  ["unsafe (2^53)", 2 ** 53],
  ["negative zero", -0],
  ["NaN", NaN],
  ["Infinity", Infinity],
  ["a string", "1"],
  ["null", null],
];

Deno.test("decodeEvent accepts every builder's valid line", () => {
  for (
    const raw of [
      user(0),
      system(0),
      system(0, { text: "" }),
      assistant(1, { callId: "c1" }),
      assistant(0, { empty: true }),
      toolResult(2, { sources: [1] }),
      toolResult(2, { isError: true, error: { name: "E", code: "X" } }),
      turnStart(0),
      toolCall(0, "c0"),
      opaque(0),
      user(3, { op: replace(0, 2), sources: [2, 0, 1] }),
      logOnly("turn/start", Number.MAX_SAFE_INTEGER, { turn: 0 }, { time: 0 }),
      logOnly("turn/start", 0, { turn: 0 }, { time: -5 }),
    ]
  ) decodes(raw);
});

Deno.test("decodeEvent fails InvalidEnvelope on a malformed envelope", async (t) => {
  await t.step("a value that is not an object", () => {
    for (const value of [null, [], "line", 3, true, undefined]) {
      decodeFails(value, "InvalidEnvelope", { problem: "not-an-object" });
    }
  });
  await t.step("a key outside the envelope, even on an ignorable event", () => {
    decodeFails({ ...turnStart(4), extra: 1 }, "InvalidEnvelope", {
      problem: "unknown-key",
      key: "extra",
      seq: 4,
    });
    decodeFails({ ...opaque(0), meta: {} }, "InvalidEnvelope", {
      problem: "unknown-key",
      key: "meta",
    });
  });
  await t.step("a missing, empty or non-string type", () => {
    for (const type of ["", 7, null]) {
      decodeFails({ ...turnStart(0), type }, "InvalidEnvelope", {
        problem: "invalid-type",
      });
    }
    decodeFails(without(turnStart(0), "type"), "InvalidEnvelope", {
      problem: "invalid-type",
    });
  });
  await t.step("a time that is not a safe integer", () => {
    for (const time of [1.5, "0", 2 ** 53, NaN, null]) {
      decodeFails({ ...turnStart(0), time }, "InvalidEnvelope", {
        problem: "invalid-time",
      });
    }
    decodeFails(without(turnStart(0), "time"), "InvalidEnvelope", {
      problem: "invalid-time",
    });
  });
  await t.step("missing data (null is a JSON value and is kept)", () => {
    decodeFails(without(turnStart(0), "data"), "InvalidEnvelope", {
      problem: "missing-data",
    });
    decodes({ ...opaque(0), data: null });
  });
  await t.step("ignorable other than the literal true", () => {
    for (const ignorable of [false, "true", 1, null]) {
      decodeFails({ ...turnStart(0), ignorable }, "InvalidEnvelope", {
        problem: "invalid-ignorable",
      });
    }
    decodes({ ...turnStart(0), ignorable: true });
  });
});

Deno.test("decodeEvent fails InvalidSessionSeq on a seq that is not a SessionSeq", async (t) => {
  for (const [name, seq] of BAD_SEQS) {
    await t.step(`a seq that is ${name}`, () => {
      decodeFails({ ...turnStart(0), seq }, "InvalidSessionSeq", {
        type: "turn/start",
      });
    });
  }
  await t.step("a missing seq", () => {
    decodeFails(without(turnStart(0), "seq"), "InvalidSessionSeq");
  });
  await t.step("an opaque event still needs a valid seq", () => {
    decodeFails({ ...opaque(0), seq: -0 }, "InvalidSessionSeq");
  });
});

Deno.test("decodeEvent fails UnknownEventType on an unknown type unless ignorable", async (t) => {
  await t.step("a type outside the vocabulary without ignorable", () => {
    decodeFails(logOnly("future/thing", 3, {}), "UnknownEventType", {
      seq: 3,
      type: "future/thing",
    });
  });
  await t.step("the same type with ignorable: true is kept opaque", () => {
    const event = decoded(logOnly("future/thing", 3, {}, { ignorable: true }));
    assert.equal(isOpaqueEvent(event), true);
  });
  await t.step("a known type is never opaque", () => {
    assert.equal(
      isOpaqueEvent(decoded({ ...turnStart(0), ignorable: true })),
      false,
    );
  });
});

Deno.test("decodeEvent fails InvalidEventData when data breaks its schema", async (t) => {
  const cases: ReadonlyArray<readonly [string, Raw]> = [
    [
      "user/message with role assistant",
      withData(user(0), {
        role: "assistant",
      }),
    ],
    ["user/message with an empty id", withData(user(0), { id: "" })],
    [
      "user/message with an empty source kind",
      withData(user(0), {
        source: { kind: "" },
      }),
    ],
    [
      "system/message from a non-plugin source",
      withMessage(system(0), {
        source: { kind: "user" },
      }),
    ],
    ["assistant/message without a stream", {
      ...assistant(0),
      data: without(assistant(0).data as Raw, "stream"),
    }],
    [
      "assistant/message with a negative turn",
      withData(assistant(0), {
        turn: -1,
      }),
    ],
    [
      "tool/result whose block answers another call",
      withMessage(toolResult(0, { callId: "c1" }), {
        content: [{ type: "tool-result", toolCallId: "c2", content: [] }],
      }),
    ],
    [
      "tool/result with two blocks",
      withMessage(toolResult(0, { callId: "c" }), {
        content: [
          { type: "tool-result", toolCallId: "c", content: [] },
          { type: "tool-result", toolCallId: "c", content: [] },
        ],
      }),
    ],
    [
      "turn/end with an unknown reason kind",
      logOnly("turn/end", 0, {
        turn: 0,
        reason: { kind: "bored" },
      }),
    ],
    [
      "step/start with a fractional step",
      logOnly("step/start", 0, {
        turn: 0,
        step: 0.5,
      }),
    ],
    [
      "request/context with a fractional context window",
      logOnly(
        "request/context",
        0,
        { provider: "p", model: "m", contextWindow: 1.5 },
      ),
    ],
    [
      "session/end-seed with inherited: false",
      logOnly("session/end-seed", 0, {
        inherited: false,
      }),
    ],
    [
      "compaction/prune shadowing -0",
      logOnly("compaction/prune", 0, {
        shadowedSeqs: [-0],
      }),
    ],
    [
      "compaction/summary shadowing 2^53",
      logOnly("compaction/summary", 0, {
        compactionId: "k",
        summary: "s",
        shadowedSeqs: [2 ** 53],
      }),
    ],
    [
      "tool/call without arguments",
      logOnly("tool/call", 0, {
        turn: 0,
        step: 0,
        callId: "c",
        name: "read",
      }),
    ],
  ];
  for (const [name, raw] of cases) {
    await t.step(name, () => {
      decodeFails(raw, "InvalidEventData", { seq: raw.seq, type: raw.type });
    });
  }
  await t.step("the error carries the path of the first issue", () => {
    const error = decodeFails(
      {
        ...user(0),
        data: {
          id: "u",
          role: "user",
          content: [{ type: "text" }],
          source: { kind: "user" },
        },
      },
      "InvalidEventData",
    );
    assert.equal(error.path[0], "content");
  });
});

Deno.test("decodeEvent fails SurfaceOpMissing on a surface type without surfaceOp", async (t) => {
  for (
    const raw of [user(0), system(0), assistant(0), toolResult(0)]
  ) {
    await t.step(
      `${raw.type} without surfaceOp is never an implicit append`,
      () => {
        decodeFails(without(raw, "surfaceOp"), "SurfaceOpMissing", {
          seq: 0,
          type: raw.type,
        });
      },
    );
  }
});

Deno.test("decodeEvent fails InvalidSurfaceOp on anything but append, prepend or an exact replace", async (t) => {
  const ops: ReadonlyArray<readonly [string, unknown]> = [
    ["another string", "insert"],
    ["a capitalized prepend", "Prepend"],
    ["null", null],
    ["an array", ["append"]],
    ["aliased keys start/end (v2 spelling)", {
      op: "replace",
      start: 0,
      end: 0,
    }],
    ["an extra key", { op: "replace", startSeq: 0, endSeq: 0, note: "x" }],
    ["both spellings at once", {
      op: "replace",
      startSeq: 0,
      endSeq: 0,
      start: 0,
    }],
    ["a missing endSeq", { op: "replace", startSeq: 0 }],
    ["another op", { op: "insert", startSeq: 0, endSeq: 0 }],
    ["startSeq -0", { op: "replace", startSeq: -0, endSeq: 0 }],
    ["endSeq NaN", { op: "replace", startSeq: 0, endSeq: NaN }],
    ["endSeq 1.5", { op: "replace", startSeq: 0, endSeq: 1.5 }],
    ["startSeq 2^53", { op: "replace", startSeq: 2 ** 53, endSeq: 0 }],
    ["a string endpoint", { op: "replace", startSeq: "0", endSeq: 0 }],
  ];
  for (const [name, surfaceOp] of ops) {
    await t.step(name, () => {
      decodeFails(
        { ...user(5, { sources: [0] }), surfaceOp },
        "InvalidSurfaceOp",
        {
          seq: 5,
          surfaceOp,
        },
      );
    });
  }
});

Deno.test("decodeEvent fails SurfaceMetadataOnLogOnlyEvent on a log-only type with surface metadata", async (t) => {
  await t.step("a log-only type with surfaceOp", () => {
    decodeFails(
      { ...turnStart(1), surfaceOp: "append" },
      "SurfaceMetadataOnLogOnlyEvent",
      {
        field: "surfaceOp",
        type: "turn/start",
      },
    );
  });
  await t.step("a log-only type with sourceEventSeqs", () => {
    decodeFails(
      { ...toolCall(1, "c"), sourceEventSeqs: [0] },
      "SurfaceMetadataOnLogOnlyEvent",
      {
        field: "sourceEventSeqs",
      },
    );
  });
  await t.step("refused even when ignorable", () => {
    decodeFails(
      { ...turnStart(1), ignorable: true, surfaceOp: "append" },
      "SurfaceMetadataOnLogOnlyEvent",
    );
    decodeFails(
      { ...turnStart(1), ignorable: true, sourceEventSeqs: [0] },
      "SurfaceMetadataOnLogOnlyEvent",
    );
  });
  await t.step(
    "an invalid surfaceOp on a log-only type is refused as metadata",
    () => {
      // Reading of the table: InvalidSurfaceOp concerns surface types; on a
      // log-only type the key's presence is the error.
      decodeFails(
        { ...turnStart(1), surfaceOp: 42 },
        "SurfaceMetadataOnLogOnlyEvent",
        {
          field: "surfaceOp",
        },
      );
    },
  );
});

Deno.test("decodeEvent fails SourcesOnAssistantMessage on a citing assistant message", async (t) => {
  for (const sources of [[0], []]) {
    await t.step(
      `assistant/message with sourceEventSeqs ${JSON.stringify(sources)}`,
      () => {
        decodeFails(assistant(1, { sources }), "SourcesOnAssistantMessage", {
          seq: 1,
        });
      },
    );
  }
  await t.step("even with a replace op", () => {
    decodeFails(
      assistant(1, { op: replace(0, 0), sources: [0] }),
      "SourcesOnAssistantMessage",
    );
  });
});

Deno.test("decodeEvent fails InvalidSourceList on a source list that is not an array of seqs", async (t) => {
  await t.step("not an array", () => {
    for (const sources of ["0", 0, { 0: 0, length: 1 }, null]) {
      decodeFails(
        { ...user(3), sourceEventSeqs: sources },
        "InvalidSourceList",
        {
          index: undefined,
        },
      );
    }
  });
  for (const [name, bad] of BAD_SEQS) {
    await t.step(`an element that is ${name}`, () => {
      decodeFails(
        { ...user(3), sourceEventSeqs: [0, bad] },
        "InvalidSourceList",
        {
          index: 1,
          seq: 3,
        },
      );
    });
  }
  await t.step("a hole", () => {
    const holes = withHole([0, 1, 2], 1);
    assert.equal(1 in holes, false);
    decodeFails({ ...user(3), sourceEventSeqs: holes }, "InvalidSourceList", {
      index: 1,
      value: undefined,
    });
  });
  await t.step("an explicit undefined element", () => {
    decodeFails(
      { ...user(3), sourceEventSeqs: [0, undefined] },
      "InvalidSourceList",
      {
        index: 1,
      },
    );
  });
});

Deno.test("decodeEvent fails EmptySourceList on sourceEventSeqs: []", () => {
  decodeFails(user(3, { sources: [] }), "EmptySourceList", { seq: 3 });
  decodeFails(toolResult(3, { sources: [] }), "EmptySourceList");
  decodeFails(system(3, { sources: [] }), "EmptySourceList");
});

Deno.test("decodeEvent fails DuplicateSource on a source listed twice", async (t) => {
  await t.step("a short list", () => {
    decodeFails(user(3, { sources: [0, 2, 0] }), "DuplicateSource", {
      source: 0,
    });
  });
  await t.step("a long list", () => {
    const sources = [...Array.from({ length: 20 }, (_, i) => i), 19];
    decodeFails(user(30, { sources }), "DuplicateSource", { source: 19 });
    decodes(user(30, { sources: sources.slice(0, 20) }));
  });
});

Deno.test("decodeEvent fails SourceNotEarlier on a source not before the event", async (t) => {
  await t.step("a source equal to the event's seq", () => {
    decodeFails(user(3, { sources: [0, 3] }), "SourceNotEarlier", {
      source: 3,
      seq: 3,
    });
  });
  await t.step("a source later than the event", () => {
    const sources = Array.from({ length: 20 }, (_, i) => i);
    decodeFails(user(10, { sources }), "SourceNotEarlier", { source: 10 });
  });
  await t.step("the sources just below are accepted", () => {
    decodes(user(3, { sources: [2, 1, 0] }));
  });
});

Deno.test("decodeEvent fails ReplaceEndpointNotEarlier on an endpoint not before the event", async (t) => {
  const cases: ReadonlyArray<
    readonly [
      string,
      number,
      number,
      FieldsOf<EventDecodeError, "ReplaceEndpointNotEarlier">,
    ]
  > = [
    ["startSeq equal to the event's seq", 3, 0, {
      endpoint: "startSeq",
      value: 3,
    }],
    ["endSeq later than the event", 0, 9, { endpoint: "endSeq", value: 9 }],
    ["endSeq equal to the event's seq", 0, 3, { endpoint: "endSeq", value: 3 }],
    ["both: startSeq is reported", 4, 5, { endpoint: "startSeq" }],
  ];
  for (const [name, startSeq, endSeq, expected] of cases) {
    await t.step(name, () => {
      decodeFails(
        user(3, { op: replace(startSeq, endSeq), sources: [0] }),
        "ReplaceEndpointNotEarlier",
        expected,
      );
    });
  }
  await t.step("numerically reversed endpoints are a fold question", () => {
    decodes(user(8, { op: replace(7, 5), sources: [5, 7] }));
  });
});

Deno.test("decodeEvent fails ToolErrorWithoutIsError on an error without isError: true", async (t) => {
  const error = { name: "ToolFailed", code: "E1" };
  await t.step("error without isError", () => {
    decodeFails(
      toolResult(2, { callId: "c9", error }),
      "ToolErrorWithoutIsError",
      {
        seq: 2,
        callId: "c9",
      },
    );
  });
  await t.step("error with isError: false", () => {
    decodeFails(
      toolResult(2, { error, isError: false }),
      "ToolErrorWithoutIsError",
    );
  });
  await t.step("error with isError: true is accepted", () => {
    decodes(toolResult(2, { error, isError: true }));
  });
});

Deno.test("decodeEvent fails RetiredHeaderSystem on a v3 header.system", async (t) => {
  const header = (extra: Raw) =>
    logOnly("request/header", 1, {
      header: { config: { provider: "p", model: "m" }, ...extra },
      reason: { kind: "first" },
    });
  await t.step("a v3 request/header with header.system", () => {
    decodeFails(header({ system: "be brief" }), "RetiredHeaderSystem", {
      seq: 1,
    });
    decodeFails(header({ system: null }), "RetiredHeaderSystem");
  });
  await t.step("without it the header decodes", () => {
    decodes(header({}));
  });
});

Deno.test("a value breaking several rules reports the first in the table's order", async (t) => {
  const cases: ReadonlyArray<
    readonly [EventDecodeError["_tag"], string, unknown]
  > = [
    ["InvalidEnvelope", "over InvalidSessionSeq", {
      ...turnStart(0),
      seq: -1,
      extra: 1,
    }],
    ["InvalidEnvelope", "bad time over bad seq", {
      ...turnStart(0),
      seq: 1.5,
      time: "x",
    }],
    ["InvalidSessionSeq", "over UnknownEventType", logOnly("x/y", -1, {})],
    ["UnknownEventType", "over SurfaceMetadataOnLogOnlyEvent", {
      ...logOnly("x/y", 1, {}),
      surfaceOp: "append",
    }],
    ["InvalidEventData", "over SurfaceOpMissing", {
      ...without(user(0), "surfaceOp"),
      data: {},
    }],
    ["InvalidEventData", "over SurfaceMetadataOnLogOnlyEvent", {
      ...logOnly("turn/start", 1, { turn: -1 }),
      surfaceOp: "append",
    }],
    ["SurfaceOpMissing", "over SourcesOnAssistantMessage", {
      ...without(assistant(1), "surfaceOp"),
      sourceEventSeqs: [0],
    }],
    ["InvalidSurfaceOp", "over SourcesOnAssistantMessage", {
      ...assistant(1, { sources: [0] }),
      surfaceOp: "insert",
    }],
    ["PrependNotSystemMessage", "over SourcesOnAssistantMessage", {
      ...assistant(1, { sources: [0] }),
      surfaceOp: "prepend",
    }],
    ["InvalidSurfaceOp", "over InvalidSourceList", {
      ...user(1, { sources: [-1] }),
      surfaceOp: {},
    }],
    ["SurfaceMetadataOnLogOnlyEvent", "over RetiredHeaderSystem", {
      ...logOnly("request/header", 1, {
        header: { config: { provider: "p", model: "m" }, system: "x" },
        reason: null,
      }),
      sourceEventSeqs: [0],
    }],
    ["SurfaceMetadataOnLogOnlyEvent", "surfaceOp over sourceEventSeqs", {
      ...turnStart(1),
      surfaceOp: "append",
      sourceEventSeqs: [0],
    }],
    ["SourcesOnAssistantMessage", "over InvalidSourceList", {
      ...assistant(1),
      sourceEventSeqs: "x",
    }],
    [
      "InvalidSourceList",
      "over DuplicateSource and SourceNotEarlier",
      user(2, {
        sources: [5, 5, -1],
      }),
    ],
    ["DuplicateSource", "over SourceNotEarlier", user(1, { sources: [5, 5] })],
    [
      "SourceNotEarlier",
      "over ReplaceEndpointNotEarlier",
      user(1, {
        op: replace(5, 5),
        sources: [1],
      }),
    ],
    [
      "EmptySourceList",
      "over ReplaceEndpointNotEarlier",
      user(1, {
        op: replace(5, 5),
        sources: [],
      }),
    ],
    [
      "ReplaceEndpointNotEarlier",
      "over ToolErrorWithoutIsError",
      toolResult(2, {
        op: replace(9, 9),
        sources: [0],
        error: { name: "E", code: "X" },
      }),
    ],
  ];
  for (const [tag, name, raw] of cases) {
    await t.step(`${tag} ${name}`, () => {
      decodeFails(raw, tag);
    });
  }
});

Deno.test("decodeEvent fails with a tag that Effect.catchTag narrows", () => {
  const program = decodeEvent(user(2, { sources: [2] })).pipe(
    Effect.map(() => "decoded"),
    Effect.catchTag(
      "SourceNotEarlier",
      (e) => Effect.succeed(`caught ${e.source}`),
    ),
  );
  assert.equal(Effect.runSync(program), "caught 2");
});

Deno.test("opaque events are kept exactly as read", async (t) => {
  await t.step("round-trip byte for byte, keys in their own order", () => {
    const line = JSON.stringify({
      ...opaque(4),
      surfaceOp: { op: "whatever", x: [1] },
      sourceEventSeqs: "not interpreted",
    });
    const event = decoded(JSON.parse(line));
    assert.equal(isOpaqueEvent(event), true);
    assert.equal(JSON.stringify(encodeEvent(event)), line);
  });
  await t.step("keep their data exactly, nested values included", () => {
    const raw = opaque(0, { data: { a: { b: [1.5, -1, "x", null, true] } } });
    assert.deepEqual(encodeEvent(decoded(raw)), raw);
  });
});

Deno.test("vocabulary extension types", async (t) => {
  const vocabulary = makeVocabulary({
    "harness/checkpoint": Schema.Struct({ label: Schema.String }),
    "harness/counter": Schema.Struct({ n: Schema.FiniteFromString }),
  });
  const options = { vocabulary };
  await t.step("decode with their data schema", () => {
    const event = decoded(
      logOnly("harness/checkpoint", 0, { label: "a" }),
      options,
    );
    assert.equal(event.type, "harness/checkpoint");
    assert.equal(isOpaqueEvent(event), false);
  });
  await t.step("are unknown without the vocabulary", () => {
    decodeFails(
      logOnly("harness/checkpoint", 0, { label: "a" }),
      "UnknownEventType",
    );
  });
  await t.step("fail InvalidEventData on bad data", () => {
    decodeFails(
      logOnly("harness/checkpoint", 0, { label: 1 }),
      "InvalidEventData",
      { type: "harness/checkpoint" },
      options,
    );
  });
  await t.step("refuse surface metadata, even when ignorable", () => {
    decodeFails(
      logOnly("harness/checkpoint", 0, { label: "a" }, { surfaceOp: "append" }),
      "SurfaceMetadataOnLogOnlyEvent",
      { field: "surfaceOp" },
      options,
    );
    decodeFails(
      logOnly("harness/checkpoint", 1, { label: "a" }, {
        ignorable: true,
        sourceEventSeqs: [0],
      }),
      "SurfaceMetadataOnLogOnlyEvent",
      { field: "sourceEventSeqs" },
      options,
    );
  });
  await t.step("decode through a transforming schema and encode back", () => {
    const raw = logOnly("harness/counter", 0, { n: "42" });
    const event = decoded(raw, options);
    assert.deepEqual(event.data, { n: 42 });
    assert.deepEqual(encodeEvent(event, options), raw);
  });
  await t.step("cannot rename a core type or be empty", () => {
    assert.throws(
      () => makeVocabulary({ "user/message": Schema.Unknown }),
      TypeError,
    );
    assert.throws(
      () => makeVocabulary({ "turn/start": Schema.Unknown }),
      TypeError,
    );
    assert.throws(() => makeVocabulary({ "": Schema.Unknown }), TypeError);
  });
});

Deno.test("encodeEvent writes canonical key order and round-trips", () => {
  const lines = [
    user(0),
    system(1, { op: replace(0, 0), sources: [0] }),
    assistant(2, { callId: "c2" }),
    toolCall(3, "c2"),
    toolResult(4, { callId: "c2", sources: [3] }),
    { ...turnStart(5), ignorable: true },
    toolResult(6, {
      callId: "c2",
      op: replace(4, 4),
      sources: [4],
      isError: true,
      error: { name: "E", code: "X" },
      meta: { bytes: 10 },
    }),
  ];
  for (const raw of lines) {
    const line = JSON.stringify(raw);
    assert.equal(JSON.stringify(encodeEvent(decoded(JSON.parse(line)))), line);
  }
  const shuffled = {
    sourceEventSeqs: [0],
    surfaceOp: replace(0, 0),
    data: user(1).data,
    time: 10,
    seq: 1,
    type: "user/message",
  };
  assert.equal(
    JSON.stringify(encodeEvent(decoded(shuffled))),
    JSON.stringify(user(1, { op: replace(0, 0), sources: [0] })),
  );
});

Deno.test("compaction markers carry the seed's nullable turn and command id", async (t) => {
  const event = (type: string, data: unknown) => ({
    type,
    seq: 5,
    time: 0,
    data,
  });
  const accepts = (type: string, data: unknown) => {
    const result = decodeEventResult(event(type, data));
    assert.ok(Result.isSuccess(result), `${type} ${JSON.stringify(data)}`);
    assert.deepEqual(result.success.data, data);
  };
  await t.step("compaction/start: turn is a number or null", () => {
    accepts("compaction/start", { compactionId: "k", turn: 2 });
    accepts("compaction/start", { compactionId: "k", turn: null });
    accepts("compaction/start", {
      compactionId: "k",
      turn: null,
      sourceCommandId: "cmd-1",
    });
    decodeFails(
      event("compaction/start", { compactionId: "k" }),
      "InvalidEventData",
    );
    decodeFails(
      event("compaction/start", { compactionId: "k", turn: -1 }),
      "InvalidEventData",
    );
    decodeFails(
      event("compaction/start", {
        compactionId: "k",
        turn: null,
        sourceCommandId: 3,
      }),
      "InvalidEventData",
    );
  });
  await t.step("compaction/end: turn and sourceCommandId are optional", () => {
    accepts("compaction/end", { compactionId: "k" });
    accepts("compaction/end", { compactionId: "k", turn: 1 });
    accepts("compaction/end", {
      compactionId: "k",
      turn: null,
      sourceCommandId: "c",
    });
    decodeFails(
      event("compaction/end", { compactionId: "k", turn: "1" }),
      "InvalidEventData",
    );
  });
});
