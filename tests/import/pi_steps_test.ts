/**
 * The pi importer's steps one at a time: the first pass's tree, the path
 * and its branches, and second-pass steps given a state and an entry.
 */
import { Result } from "effect";
import assert from "node:assert/strict";
import { makeBuilder } from "../../src/import/builder.ts";
import {
  endPi,
  modelChange,
  piMessage,
  type PiState,
  piState,
} from "../../src/import/pi.ts";
import {
  branchesOff,
  emptyPiTree,
  pathToRoot,
  type PiTree,
  treeRecord,
} from "../../src/import/pi_tree.ts";
import { types } from "./_steps.ts";

/** A tree read from `entries` (id, parent) after a version 3 header. */
const treeOf = (
  entries: ReadonlyArray<readonly [string, string | null]>,
): PiTree => {
  const t = emptyPiTree();
  const header = { type: "session", version: 3, id: "s", cwd: "/w" };
  assert.equal(Result.isSuccess(treeRecord(t, "f", header, 1)), true);
  entries.forEach(([id, parentId], i) => {
    treeRecord(t, "f", { type: "message", id, parentId }, i + 2);
  });
  return t;
};

const stateOf = (t: PiTree): PiState =>
  piState(
    makeBuilder(),
    "unused.jsonl",
    {
      recover: false,
      maxLineBytes: 1024,
    },
    t,
    3,
  );

Deno.test("pi steps: the first pass refuses a file whose first record is no header", () => {
  const t = emptyPiTree();
  const refused = treeRecord(t, "f", { type: "message", id: "a" }, 1);
  assert.equal(Result.isFailure(refused), true);
  assert.equal(t.header, undefined);
});

Deno.test("pi steps: the path runs from the last entry to the root, the rest are branches", () => {
  // a1 <- a2 <- a3 (abandoned), a2 <- b3 <- b4 (the path)
  const t = treeOf([
    ["a1", null],
    ["a2", "a1"],
    ["a3", "a2"],
    ["b3", "a2"],
    ["b4", "b3"],
  ]);
  assert.equal(t.lastId, "b4");
  const onPath = pathToRoot(t.tree, t.lastId);
  assert.deepEqual([...onPath].sort(), ["a1", "a2", "b3", "b4"]);
  assert.deepEqual(branchesOff(t.tree, onPath), [{ fromLine: 3, lines: [4] }]);
});

Deno.test("pi steps: an assistant message keeps its stop reason; endPi closes the turn it ended", () => {
  const s = stateOf(treeOf([]));
  const user = piMessage(s, 2, "message/user", "u1", {
    role: "user",
    content: "hi",
  });
  assert.equal(Result.isSuccess(user), true);
  const answer = piMessage(s, 3, "message/assistant", "a1", {
    role: "assistant",
    content: [{ type: "text", text: "hello" }],
    stopReason: "stop",
  });
  assert.equal(Result.isSuccess(answer), true);
  assert.equal(s.lastStop, "stop");
  assert.equal(s.b.turn, 0);
  assert.equal(Result.isSuccess(endPi(s)), true);
  assert.equal(s.b.turn, undefined);
  assert.equal(types(s).at(-1), "turn/end");
});

Deno.test("pi steps: model_change sets the model an assistant message falls back to", () => {
  const s = stateOf(treeOf([]));
  const changed = modelChange(
    s,
    {
      type: "model_change",
      provider: "openai",
      modelId: "gpt-5",
    },
    2,
    "model_change",
  );
  assert.equal(Result.isSuccess(changed), true);
  assert.deepEqual(s.model, { provider: "openai", model: "gpt-5" });
  assert.deepEqual(types(s), ["request/context"]);
});
