import assert from "node:assert/strict";
import { Effect, Result, Schema } from "effect";
import {
  applyEvent,
  deriveMessages,
  emptySurface,
  makeVocabulary,
  replay,
} from "@palimpsest/session";
import {
  applyEventResult,
  emptySurfaceAt,
  logEvent,
  surfaceEvent,
  surfaceNodes,
} from "@palimpsest/session/internal";
import { replayResult } from "@palimpsest/session";
import { fold, given } from "../_helpers/decider.ts";
import {
  assistant,
  decoded,
  logOnly,
  opaque,
  type Raw,
  replace,
  s,
  system,
  toolCall,
  toolResult,
  toolResultData,
  type ToolResultOptions,
  toolResultWith,
  turnStart,
  user,
} from "../_helpers/build.ts";
import { thenFails } from "../_helpers/then.ts";

const users = (from: number, to: number): Raw[] =>
  Array.from({ length: to - from + 1 }, (_, i) => user(from + i));

Deno.test("applyEvent appends surface events and only advances past log-only and opaque ones", async (t) => {
  await t.step("an append puts the event at the tail", () => {
    given([user(0), assistant(1)]).when(user(2)).then([0, 1, 2]);
  });
  await t.step("a log-only event only advances the expected seq", () => {
    const surface = given([user(0)]).when(toolCall(1, "c")).then([0]);
    assert.equal(surface.nextSeq, 2);
  });
  await t.step(
    "an opaque event never joins the surface, whatever it says",
    () => {
      const surface = given([user(0)])
        .when(opaque(1, { surfaceOp: "append", sourceEventSeqs: [0] }))
        .then([0]);
      assert.equal(surfaceEvent(surface, s(1)), undefined);
      assert.equal(logEvent(surface, s(1))?.type, "future/thing");
    },
  );
  await t.step("an extension event never joins the surface", () => {
    const options = {
      vocabulary: makeVocabulary({ "x/mark": Schema.Struct({}) }),
    };
    given([user(0)], emptySurface, options)
      .when(logOnly("x/mark", 1, {}))
      .then([0]);
  });
});

Deno.test("applyEvent fails NonContiguousSeq on a seq that is not the next", async (t) => {
  await t.step("a gap", () => {
    given([user(0)]).when(user(2)).thenFails("NonContiguousSeq", {
      expected: 1,
      actual: 2,
    });
  });
  await t.step("a repeated seq", () => {
    given([user(0), user(1)]).when(user(1)).thenFails("NonContiguousSeq", {
      expected: 2,
      actual: 1,
    });
  });
  await t.step("a window expects its base first", () => {
    given([], emptySurfaceAt(s(10))).when(user(0)).thenFails(
      "NonContiguousSeq",
      { expected: 10, actual: 0 },
    );
    given([], emptySurfaceAt(s(10))).when(user(10)).then([10]);
  });
  await t.step("checked before any replace rule", () => {
    given([user(0)])
      .when(user(5, { op: replace(3, 4) }))
      .thenFails("NonContiguousSeq", { expected: 1, actual: 5 });
  });
});

Deno.test("applyEvent fails ReplaceStartNotOnSurface when startSeq is not a node", async (t) => {
  await t.step("the start is a log-only event", () => {
    given([user(0), turnStart(1), user(2)])
      .when(user(3, { op: replace(1, 2), sources: [1, 2] }))
      .thenFails("ReplaceStartNotOnSurface", { seq: 3, startSeq: 1 });
  });
  await t.step("the start is an opaque event", () => {
    given([user(0), opaque(1)])
      .when(user(2, { op: replace(1, 1), sources: [1] }))
      .thenFails("ReplaceStartNotOnSurface", { startSeq: 1 });
  });
  await t.step("the start was already shadowed", () => {
    given([user(0), user(1), user(2, { op: replace(0, 0), sources: [0] })])
      .when(user(3, { op: replace(0, 1), sources: [0, 1] }))
      .thenFails("ReplaceStartNotOnSurface", { startSeq: 0 });
  });
  await t.step("checked before the end", () => {
    given([turnStart(0), turnStart(1)])
      .when(user(2, { op: replace(0, 1), sources: [0, 1] }))
      .thenFails("ReplaceStartNotOnSurface");
  });
});

Deno.test("applyEvent fails ReplaceEndNotOnSurface when endSeq is not a node", async (t) => {
  await t.step("the end is a log-only event", () => {
    given([user(0), turnStart(1)])
      .when(user(2, { op: replace(0, 1), sources: [0, 1] }))
      .thenFails("ReplaceEndNotOnSurface", { seq: 2, endSeq: 1 });
  });
  await t.step("the end was already shadowed", () => {
    given([user(0), user(1), user(2, { op: replace(1, 1), sources: [1] })])
      .when(user(3, { op: replace(0, 1), sources: [0, 1] }))
      .thenFails("ReplaceEndNotOnSurface", { endSeq: 1 });
  });
});

Deno.test("applyEvent fails ReplaceRangeInverted when start stands after end", async (t) => {
  await t.step("start after end in surface order", () => {
    given(users(0, 2))
      .when(user(3, { op: replace(2, 0), sources: [0, 1, 2] }))
      .thenFails("ReplaceRangeInverted", { seq: 3, startSeq: 2, endSeq: 0 });
  });
  await t.step("checked before citations", () => {
    given(users(0, 2))
      .when(user(3, { op: replace(2, 0) }))
      .thenFails("ReplaceRangeInverted");
  });
  await t.step(
    "order is by position: a replacement takes its range's place",
    () => {
      // 7 replaces 0..1, so it stands before 2..6 although its seq is larger.
      const history = [
        ...users(0, 6),
        user(7, { op: replace(0, 1), sources: [0, 1] }),
      ];
      given(history)
        .when(user(8, { op: replace(7, 5), sources: [7, 2, 3, 4, 5] }))
        .then([8, 6]);
      given(history)
        .when(user(8, { op: replace(5, 7), sources: [7, 2, 3, 4, 5] }))
        .thenFails("ReplaceRangeInverted", { startSeq: 5, endSeq: 7 });
    },
  );
  await t.step("a single node range is start = end", () => {
    given(users(0, 2))
      .when(user(3, { op: replace(1, 1), sources: [1] }))
      .then([0, 3, 2]);
  });
});

Deno.test("applyEvent fails ShadowedNodeNotCited when a shadowed node is not cited", async (t) => {
  await t.step("a node in the range is missing from the sources", () => {
    given(users(0, 3))
      .when(user(4, { op: replace(0, 2), sources: [2, 0] }))
      .thenFails("ShadowedNodeNotCited", { seq: 4, missing: [1] });
  });
  await t.step("a replacement without sources misses every node", () => {
    given(users(0, 3))
      .when(user(4, { op: replace(1, 2) }))
      .thenFails("ShadowedNodeNotCited", { missing: [1, 2] });
  });
  await t.step("an assistant message can never replace: it cannot cite", () => {
    given(users(0, 1))
      .when(assistant(2, { op: replace(0, 1) }))
      .thenFails("ShadowedNodeNotCited", { missing: [0, 1] });
  });
  await t.step("extra sources (log-only, older, shadowed) are accepted", () => {
    given([
      user(0),
      turnStart(1),
      user(2),
      user(3, { op: replace(0, 0), sources: [0] }),
    ])
      .when(user(4, { op: replace(3, 2), sources: [0, 1, 2, 3] }))
      .then([4]);
  });
  await t.step("a long citation list over a long range", () => {
    const sources = Array.from({ length: 40 }, (_, i) => 39 - i);
    given(users(0, 39))
      .when(user(40, { op: replace(0, 39), sources }))
      .then([40]);
    given(users(0, 39))
      .when(user(40, { op: replace(0, 39), sources: sources.slice(1) }))
      .thenFails("ShadowedNodeNotCited", { missing: [39] });
  });
});

Deno.test("applyEvent fails ToolResultReplaceNotSingle on a multi-node tool/result replace", async (t) => {
  await t.step("a tool/result replacing two nodes", () => {
    given([toolResult(0), toolResult(1)])
      .when(toolResult(2, { callId: "c0", op: replace(0, 1), sources: [0, 1] }))
      .thenFails("ToolResultReplaceNotSingle", { seq: 2, rangeLength: 2 });
  });
  await t.step("checked after citations", () => {
    given([toolResult(0), toolResult(1)])
      .when(toolResult(2, { callId: "c0", op: replace(0, 1), sources: [0] }))
      .thenFails("ShadowedNodeNotCited", { missing: [1] });
  });
  await t.step("checked before the target's type", () => {
    given(users(0, 1))
      .when(toolResult(2, { op: replace(0, 1), sources: [0, 1] }))
      .thenFails("ToolResultReplaceNotSingle");
  });
});

Deno.test("applyEvent fails ToolResultReplaceTargetNotToolResult when the target is another type", async (t) => {
  await t.step("a tool/result replacing a user message", () => {
    given([user(0)])
      .when(toolResult(1, { op: replace(0, 0), sources: [0] }))
      .thenFails("ToolResultReplaceTargetNotToolResult", {
        seq: 1,
        target: 0,
        targetType: "user/message",
      });
  });
  await t.step("a tool/result replacing the system head", () => {
    given([system(0)])
      .when(toolResult(1, { op: replace(0, 0), sources: [0] }))
      .thenFails("ToolResultReplaceTargetNotToolResult", {
        targetType: "system/message",
      });
  });
});

Deno.test("applyEvent fails ToolResultReplaceChangesMoreThanContent unless only the inner content changes", async (t) => {
  const base: ToolResultOptions = {
    callId: "c0",
    id: "r0",
    isError: true,
    error: { name: "ToolFailed", code: "E1" },
    meta: { bytes: 12, tags: ["a"] },
    turn: 1,
    step: 2,
    content: [{ type: "text", text: "a very long result" }],
  };
  const history = [toolCall(0, "c0"), toolResult(1, { ...base, sources: [0] })];
  const prune = (changes: ToolResultOptions): Raw =>
    toolResult(2, { ...base, ...changes, op: replace(1, 1), sources: [1] });

  await t.step("changing only the block's inner content is a prune", () => {
    const surface = given(history)
      .when(prune({ content: [{ type: "text", text: "[pruned]" }] }))
      .then([2]);
    assert.equal(surface.replacements, 1);
    given(history).when(prune({ content: [] })).then([2]);
    given(history).when(prune({})).then([2]);
  });
  const changes: ReadonlyArray<readonly [string, ToolResultOptions]> = [
    ["the message id", { id: "r9" }],
    ["the callId (source and block together)", { callId: "c9" }],
    ["isError", { isError: undefined, error: undefined }],
    ["the turn", { turn: 2 }],
    ["the step", { step: 3 }],
    ["the error", { error: { name: "ToolFailed", code: "E2" } }],
    ["the error's presence", { error: undefined }],
    ["meta", { meta: { bytes: 12, tags: ["b"] } }],
    ["meta's presence", { meta: undefined }],
  ];
  for (const [name, change] of changes) {
    await t.step(`changing ${name} fails`, () => {
      given(history)
        .when(prune({ ...change, content: [] }))
        .thenFails("ToolResultReplaceChangesMoreThanContent", {
          seq: 2,
          target: 1,
        });
    });
  }
  const data = (): Raw => toolResultData(2, { ...base, content: [] });
  const rewritten = (edit: (data: Raw) => Raw): Raw =>
    toolResultWith(2, edit(data()), { op: replace(1, 1), sources: [1] });
  const message = (d: Raw): Raw => d.message as Raw;
  const withMessage = (d: Raw, extra: Raw): Raw => ({
    ...d,
    message: { ...message(d), ...extra },
  });
  const extras: ReadonlyArray<readonly [string, (data: Raw) => Raw, unknown]> =
    [
      ["an extra key in data", (d) => ({ ...d, note: 1 }), ["note"]],
      [
        "an extra key in the source",
        (d) =>
          withMessage(d, {
            source: { ...(message(d).source as Raw), tool: "read" },
          }),
        ["message", "source", "tool"],
      ],
      [
        "an extra key in the block",
        (d) =>
          withMessage(d, {
            content: [{
              ...(message(d).content as ReadonlyArray<Raw>)[0],
              cached: true,
            }],
          }),
        ["message", "content", 0, "cached"],
      ],
      [
        "an extra key in the message",
        (d) => withMessage(d, { name: "x" }),
        ["message", "name"],
      ],
    ];
  for (const [name, edit, path] of extras) {
    await t.step(`${name} fails, with its path`, () => {
      given(history)
        .when(rewritten(edit))
        .thenFails("ToolResultReplaceChangesMoreThanContent", { path });
    });
  }
  await t.step("isError absent and isError false differ", () => {
    const plain = [toolResult(0)];
    given(plain)
      .when(
        toolResult(1, {
          callId: "c0",
          id: "r0",
          isError: false,
          op: replace(0, 0),
          sources: [0],
        }),
      )
      .thenFails("ToolResultReplaceChangesMoreThanContent", {
        path: ["message", "content", 0, "isError"],
      });
  });
});

Deno.test("applyEvent fails SystemHeadProtected unless a system message replaces exactly the head", async (t) => {
  const history = [system(0), user(1), user(2)];
  await t.step("a user message over the head", () => {
    given(history)
      .when(user(3, { op: replace(0, 1), sources: [0, 1] }))
      .thenFails("SystemHeadProtected", { seq: 3, head: 0 });
    given(history)
      .when(user(3, { op: replace(0, 0), sources: [0] }))
      .thenFails("SystemHeadProtected");
  });
  await t.step("a system message over more than the head", () => {
    given(history)
      .when(system(3, { op: replace(0, 1), sources: [0, 1] }))
      .thenFails("SystemHeadProtected", { head: 0 });
  });
  await t.step("a system message over exactly the head", () => {
    given(history)
      .when(system(3, { op: replace(0, 0), sources: [0] }))
      .then([3, 1, 2]);
  });
  await t.step("the new head is protected in turn", () => {
    given([...history, system(3, { op: replace(0, 0), sources: [0] })])
      .when(user(4, { op: replace(3, 1), sources: [3, 1] }))
      .thenFails("SystemHeadProtected", { head: 3 });
  });
  await t.step("ranges after the head are free", () => {
    given(history)
      .when(user(3, { op: replace(1, 2), sources: [1, 2] }))
      .then([0, 3]);
  });
  await t.step("a head that is not a system message is not protected", () => {
    given([user(0), system(1)])
      .when(user(2, { op: replace(0, 1), sources: [0, 1] }))
      .then([2]);
  });
  await t.step("an empty-content head is still protected", () => {
    given([system(0, { text: "" }), user(1)])
      .when(user(2, { op: replace(0, 1), sources: [0, 1] }))
      .thenFails("SystemHeadProtected");
  });
  await t.step("checked after citations", () => {
    given(history)
      .when(user(3, { op: replace(0, 1), sources: [1] }))
      .thenFails("ShadowedNodeNotCited", { missing: [0] });
  });
});

Deno.test("a window refuses replaces below its base and accepts sources below it", async (t) => {
  const window = emptySurfaceAt(s(10));
  const history = [user(10), user(11), user(12)];
  await t.step("a replace starting below the base", () => {
    given(history, window)
      .when(user(13, { op: replace(9, 11), sources: [9, 10, 11] }))
      .thenFails("ReplaceStartNotOnSurface", { startSeq: 9 });
  });
  await t.step("a replace ending below the base", () => {
    given(history, window)
      .when(user(13, { op: replace(10, 0), sources: [0, 10] }))
      .thenFails("ReplaceEndNotOnSurface", { endSeq: 0 });
  });
  await t.step("sources below the base are accepted unchecked", () => {
    given(history, window)
      .when(user(13, { op: replace(10, 11), sources: [3, 10, 11, 0] }))
      .then([13, 12]);
    given(history, window).when(user(13, { sources: [1, 2] })).then([
      10,
      11,
      12,
      13,
    ]);
  });
  await t.step("a window can protect its own system head", () => {
    given([system(10), user(11)], window)
      .when(user(12, { op: replace(10, 11), sources: [10, 11] }))
      .thenFails("SystemHeadProtected", { head: 10 });
  });
  await t.step("reads outside the window are undefined", () => {
    const surface = fold(history, window);
    assert.equal(logEvent(surface, s(9)), undefined);
    assert.equal(surfaceEvent(surface, s(9)), undefined);
    assert.equal(logEvent(surface, s(13)), undefined);
    assert.equal(surface.baseSeq, 10);
  });
});

Deno.test("a rejected event leaves the input surface usable and unchanged", () => {
  const before = fold([system(0), user(1), toolResult(2), user(3)]);
  const nodes = surfaceNodes(before);
  const bad = [
    user(5),
    user(4, { op: replace(1, 3), sources: [1, 3] }),
    user(4, { op: replace(3, 1), sources: [1, 2, 3] }),
    toolResult(4, { callId: "c9", op: replace(2, 2), sources: [2] }),
    user(4, { op: replace(0, 0), sources: [0] }),
  ];
  for (const raw of bad) {
    const result = applyEventResult(before, decoded(raw));
    assert.equal(Result.isFailure(result), true);
    assert.deepEqual(surfaceNodes(before), nodes);
  }
  // A candidate that succeeds and is dropped does not change it either.
  const candidate = applyEventResult(
    before,
    decoded(user(4, { op: replace(1, 3), sources: [1, 2, 3] })),
  );
  assert.equal(Result.isSuccess(candidate), true);
  assert.deepEqual(surfaceNodes(before), nodes);
  const other = Effect.runSync(applyEvent(before, decoded(user(4))));
  assert.deepEqual(surfaceNodes(other), [...nodes, 4]);
  assert.deepEqual(surfaceNodes(before), nodes);
  assert.equal(before.nextSeq, 4);
  if (Result.isSuccess(candidate)) {
    assert.deepEqual(surfaceNodes(candidate.success), [0, 4]);
  }
});

Deno.test("replay folds events, stops at the first broken rule and counts", async (t) => {
  const lines = [
    system(0),
    user(1),
    assistant(2, { callId: "c2" }),
    toolCall(3, "c2"),
    toolResult(4, { callId: "c2", sources: [3] }),
  ];
  const events = lines.map((l) => decoded(l));
  await t.step("folds from the empty surface by default", () => {
    assert.deepEqual(surfaceNodes(Effect.runSync(replay(events))), [
      0,
      1,
      2,
      4,
    ]);
  });
  await t.step("with no new events returns the surface itself", () => {
    const surface = Effect.runSync(replay(events));
    assert.equal(Effect.runSync(replay([], surface)), surface);
  });
  await t.step(
    "fails with the first broken rule and keeps what came before",
    () => {
      const result = replayResult([
        ...events,
        decoded(user(6)),
        decoded(user(5)),
      ]);
      assert.equal(Result.isFailure(result), true);
      if (Result.isFailure(result)) {
        thenFails(result.failure.error, "NonContiguousSeq");
        assert.deepEqual(surfaceNodes(result.failure.surface), [0, 1, 2, 4]);
        assert.equal(result.failure.surface.nextSeq, 5);
      }
      const tag = Effect.runSync(
        replay([decoded(user(1))]).pipe(
          Effect.map(() => "folded"),
          Effect.catchTag(
            "NonContiguousSeq",
            (e) => Effect.succeed(`expected ${e.expected}`),
          ),
        ),
      );
      assert.equal(tag, "expected 0");
    },
  );
  await t.step("counts nodes and replacements", () => {
    const surface = fold([
      ...lines,
      user(5, { op: replace(1, 4), sources: [1, 2, 4] }),
    ]);
    assert.equal(surface.length, 2);
    assert.equal(surface.replacements, 1);
    assert.equal(surface.head, 0);
    assert.equal(surface.tail, 5);
    assert.equal(surfaceEvent(surface, s(2)), undefined);
    assert.equal(logEvent(surface, s(2))?.type, "assistant/message");
    assert.deepEqual(deriveMessages(surface).map((m) => m.id), ["sys0", "u5"]);
  });
});

Deno.test("a lazy replay whose iterable reads other surfaces folds correctly", async (t) => {
  await t.step("reading the start surface between events", () => {
    const from = fold([user(0), user(1), user(2)]);
    const seen: Array<ReadonlyArray<number>> = [];
    function* events() {
      yield decoded(user(3, { op: replace(1, 1), sources: [1] }));
      seen.push(surfaceNodes(from));
      yield decoded(user(4));
    }
    const result = replayResult(events(), from);
    if (Result.isFailure(result)) assert.fail(result.failure.error._tag);
    assert.deepEqual(seen, [[0, 1, 2]]);
    assert.deepEqual(surfaceNodes(result.success), [0, 3, 2, 4]);
    assert.deepEqual(surfaceNodes(from), [0, 1, 2]);
  });
  await t.step("extending another version between events", () => {
    const from = fold([user(0), user(1), user(2)]);
    const other = fold([user(3)], from);
    function* events() {
      yield decoded(user(3, { op: replace(0, 1), sources: [0, 1] }));
      const extended = applyEventResult(other, decoded(user(4)));
      assert.equal(Result.isSuccess(extended), true);
      yield decoded(user(4));
    }
    const result = replayResult(events(), from);
    if (Result.isFailure(result)) assert.fail(result.failure.error._tag);
    assert.deepEqual(surfaceNodes(result.success), [3, 2, 4]);
    assert.deepEqual(surfaceNodes(from), [0, 1, 2]);
    assert.deepEqual(surfaceNodes(other), [0, 1, 2, 3]);
  });
  await t.step("across chunk boundaries, failing at the end", () => {
    const from = fold([user(0), user(1)]);
    let other = fold([user(2)], from);
    const n = 10_000;
    function* events() {
      for (let seq = 2; seq < n; seq++) {
        if (seq % 997 === 0) {
          // Read the start first: reading it after extending `other` would
          // move the store back and hide a broken fold.
          assert.deepEqual(surfaceNodes(from), [0, 1]);
          const next = applyEventResult(other, decoded(user(other.nextSeq)));
          if (Result.isSuccess(next)) other = next.success;
        }
        yield decoded(
          seq % 2 === 0
            ? user(seq)
            : user(seq, { op: replace(seq - 1, seq - 1), sources: [seq - 1] }),
        );
      }
      yield decoded(user(n + 5));
    }
    const result = replayResult(events(), from);
    if (Result.isSuccess(result)) assert.fail("Expected the gap to fail");
    thenFails(result.failure.error, "NonContiguousSeq");
    const nodes = surfaceNodes(result.failure.surface);
    assert.equal(nodes.length, n / 2 + 1);
    assert.deepEqual(nodes.slice(0, 3), [0, 1, 3]);
    assert.equal(result.failure.surface.nextSeq, n);
    assert.deepEqual(surfaceNodes(from), [0, 1]);
    assert.equal(surfaceNodes(other).length, 3 + Math.floor((n - 1) / 997));
  });
});
