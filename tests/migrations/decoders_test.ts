import assert from "node:assert/strict";
import { Result } from "effect";
import {
  decodeV0Event,
  decodeV1Event,
  decodeV2Event,
} from "../../migrations/mod.ts";
import { ev } from "./_helpers.ts";
import { thenFails } from "../_helpers/then.ts";

type Decode = typeof decodeV1Event;

const refusal = (decode: Decode, input: unknown) => {
  const result = decode(input, 7);
  if (Result.isSuccess(result)) return assert.fail("Expected a refusal");
  return result.failure;
};

const ok = (decode: Decode, input: unknown): void => {
  const result = decode(input, 7);
  assert.ok(
    Result.isSuccess(result),
    Result.isFailure(result) ? result.failure._tag : "",
  );
};

const at = (e: Record<string, unknown>, seq = 3): Record<string, unknown> => ({
  seq,
  time: 5,
  ...e,
});

const decoders: ReadonlyArray<readonly [number, Decode]> = [
  [0, decodeV0Event],
  [1, decodeV1Event],
  [2, decodeV2Event],
];

for (const [version, decode] of decoders) {
  Deno.test(`decodeV${version}Event() envelope rules`, async (t) => {
    const user = at(ev.user("u"));
    /** Where a refused event at seq 3 stands: line 7 of a version-`version` log. */
    const where = { line: 7, seq: 3, version };
    await t.step("accepts a user message", () => ok(decode, user));
    await t.step("refuses a non-object with InvalidLegacyEnvelope", () => {
      thenFails(refusal(decode, [user]), "InvalidLegacyEnvelope", {
        line: 7,
        seq: undefined,
        version,
        reason: "event",
      });
    });
    for (const seq of [-1, -0, 1.5, Number.MAX_SAFE_INTEGER + 1, "3", null]) {
      await t.step(
        `refuses seq ${String(seq)} with InvalidLegacyEnvelope`,
        () => {
          thenFails(
            refusal(decode, { ...user, seq }),
            "InvalidLegacyEnvelope",
            {
              reason: "seq",
            },
          );
        },
      );
    }
    await t.step("refuses a key outside the envelope", () => {
      thenFails(
        refusal(decode, { ...user, extra: 1 }),
        "InvalidLegacyEnvelope",
        {
          ...where,
          reason: "extra",
        },
      );
    });
    for (
      const [key, value] of [["type", ""], ["time", 1.5], [
        "ignorable",
        false,
      ]] as const
    ) {
      await t.step(`refuses a bad ${key}`, () => {
        thenFails(
          refusal(decode, { ...user, [key]: value }),
          "InvalidLegacyEnvelope",
          { reason: key },
        );
      });
    }
    await t.step("refuses missing data", () => {
      const { data: _data, ...rest } = user;
      thenFails(refusal(decode, rest), "InvalidLegacyEnvelope", {
        reason: "data",
      });
    });
    await t.step("refuses an unknown type with UnknownLegacyEventType", () => {
      thenFails(
        refusal(decode, at({ type: "x/y", data: {} })),
        "UnknownLegacyEventType",
        {
          ...where,
          type: "x/y",
        },
      );
    });
    await t.step("keeps an ignorable unknown type opaque", () => {
      ok(decode, at({ type: "x/y", data: { any: [1] }, ignorable: true }));
    });
    await t.step(
      "refuses a surface event without surfaceOp with MissingSurfaceMarker",
      () => {
        const { surfaceOp: _op, ...rest } = user;
        thenFails(refusal(decode, rest), "MissingSurfaceMarker", {
          ...where,
          type: "user/message",
        });
      },
    );
    const replace = (op: unknown) =>
      refusal(decode, { ...user, surfaceOp: op, sourceEventSeqs: [1] });
    await t.step(
      "refuses the v3 replace spelling with MalformedReplace",
      () => {
        thenFails(
          replace({ op: "replace", startSeq: 1, endSeq: 1 }),
          "MalformedReplace",
          {
            ...where,
            reason: "startSeq",
          },
        );
      },
    );
    for (
      const [name, op, reason] of [
        ["an unknown op", { op: "insert", start: 1, end: 1 }, "op"],
        ["a missing end", { op: "replace", start: 1 }, "end"],
        ["an endpoint not earlier", { op: "replace", start: 1, end: 3 }, "end"],
        ["a string op", "prepend", "surfaceOp"],
      ] as const
    ) {
      await t.step(`refuses ${name} with MalformedReplace`, () => {
        thenFails(replace(op), "MalformedReplace", { reason });
      });
    }
    await t.step("accepts a legacy replace", () => {
      ok(decode, {
        ...user,
        surfaceOp: { op: "replace", start: 1, end: 2 },
        sourceEventSeqs: [1, 2],
      });
    });
    await t.step("refuses surface metadata on a log-only event", () => {
      thenFails(
        refusal(decode, at({ ...ev.turnStart(), surfaceOp: "append" })),
        "SurfaceMetadataOnLegacyLogOnly",
        {
          ...where,
          type: "turn/start",
        },
      );
    });
    for (
      const [name, sources, reason] of [
        ["an empty list", [], "empty"],
        ["a duplicate", [1, 1], "duplicate"],
        ["a later seq", [3], "not-earlier"],
        ["a hole", [1, , 2], "shape"],
        ["not a list", 1, "shape"],
      ] as const
    ) {
      await t.step(
        `refuses ${name} in sourceEventSeqs with InvalidLegacySourceList`,
        () => {
          thenFails(
            refusal(decode, { ...user, sourceEventSeqs: sources }),
            "InvalidLegacySourceList",
            { reason },
          );
        },
      );
    }
    await t.step(
      "refuses bad data with InvalidLegacyEventData and its path",
      () => {
        thenFails(
          refusal(
            decode,
            at({ type: "step/start", data: { turn: 0, step: -1 } }),
          ),
          "InvalidLegacyEventData",
          { type: "step/start", path: "step" },
        );
        const g = refusal(
          decode,
          at({
            ...ev.user("u"),
            data: {
              id: "u",
              role: "system",
              content: [],
              source: { kind: "user" },
            },
          }),
        );
        thenFails(g, "InvalidLegacyEventData", { path: "role" });
      },
    );
    await t.step("refuses a non-string header.system", () => {
      const f = refusal(
        decode,
        at({
          type: "request/header",
          data: {
            header: { config: { provider: "p", model: "m" }, system: 1 },
            reason: 0,
          },
        }),
      );
      thenFails(f, "InvalidLegacyEventData", { path: "header.system" });
    });
  });
}

Deno.test("each frozen vocabulary knows only its own types", async (t) => {
  const steering = at({ ...ev.user("s"), type: "steering/message" });
  const chunk = at(ev.chunk("c"));
  const compact = at({
    type: "compact/start",
    data: { compactionId: "k", turn: 0 },
  });
  const compaction = at({
    type: "compaction/start",
    data: { compactionId: "k", turn: 0 },
  });
  const attempt = at({
    type: "assistant/attempt",
    data: { turn: 0, step: 0, stream: [] },
  });
  const system = at({
    type: "system/message",
    data: {
      turn: 0,
      step: 0,
      message: {
        id: "s",
        role: "system",
        content: [],
        source: { kind: "plugin", plugin: "p" },
      },
    },
    surfaceOp: "append",
  });
  const table: ReadonlyArray<
    readonly [
      string,
      Record<string, unknown>,
      readonly [boolean, boolean, boolean],
    ]
  > = [
    ["steering/message", steering, [true, false, false]],
    ["compact/start", compact, [true, false, false]],
    ["compaction/start", compaction, [false, true, true]],
    ["assistant/chunk", chunk, [true, true, false]],
    ["assistant/attempt", attempt, [false, false, true]],
    ["system/message", system, [false, false, false]],
  ];
  for (const [type, input, known] of table) {
    await t.step(type, () => {
      decoders.forEach(([version, decode], i) => {
        const result = decode(input, 7);
        const tag = Result.isFailure(result) ? result.failure._tag : "ok";
        assert.equal(
          tag,
          known[i] ? "ok" : "UnknownLegacyEventType",
          `v${version}`,
        );
      });
    });
  }
});

Deno.test("decodeV2Event() refuses sourceEventSeqs on assistant/message", () => {
  const f = refusal(
    decodeV2Event,
    at({ ...ev.assistantV2("a"), sourceEventSeqs: [1] }),
  );
  thenFails(f, "InvalidLegacySourceList", { reason: "forbidden" });
});

Deno.test("decodeV1Event() refuses a stream inside assistant/message data", () => {
  const msg = ev.assistantV1("a");
  const data = msg["data"];
  const input = at({
    ...msg,
    data: typeof data === "object" ? { ...data, stream: 1 } : data,
  });
  thenFails(refusal(decodeV1Event, input), "InvalidLegacyEventData", {
    path: "stream",
  });
});
