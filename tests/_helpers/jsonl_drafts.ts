/**
 * Drafts of the standard workload (a turn: user message, assistant message
 * with one tool call, tool/call, tool/result) and small helpers for the
 * persistence tests: temp folders and running programs against a store.
 *
 * @module
 */
import { Effect, Exit, type Scope } from "effect";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  type EventDraft,
  layerJsonlStore,
  type SessionStore,
} from "@palimpsest/session";

const model = { kind: "model", provider: "test", model: "m" } as const;

/** `user/message`. */
export const userDraft = (id: string, text: string): EventDraft => ({
  type: "user/message",
  surfaceOp: "append",
  data: {
    id,
    role: "user",
    content: [{ type: "text", text }],
    source: { kind: "user" },
  },
});

/** `assistant/message` with one `tool-call` block. */
export const assistantCallDraft = (
  turn: number,
  step: number,
  callId: string,
): EventDraft => ({
  type: "assistant/message",
  surfaceOp: "append",
  data: {
    turn,
    step,
    stream: [],
    message: {
      id: `a-${callId}`,
      role: "assistant",
      content: [
        { type: "text", text: "let me look" },
        { type: "tool-call", id: callId, name: "read", arguments: "{}" },
      ],
      source: model,
    },
  },
});

/** `assistant/message` with text only. */
export const assistantTextDraft = (
  turn: number,
  step: number,
  id: string,
): EventDraft => ({
  type: "assistant/message",
  surfaceOp: "append",
  data: {
    turn,
    step,
    stream: [],
    message: {
      id,
      role: "assistant",
      content: [{ type: "text", text: "done" }],
      source: model,
    },
  },
});

/** `tool/call`. */
export const toolCallDraft = (
  turn: number,
  step: number,
  callId: string,
): EventDraft => ({
  type: "tool/call",
  data: { turn, step, callId, name: "read", arguments: "{}" },
});

/** `tool/result` answering `callId`. */
export const toolResultDraft = (
  turn: number,
  step: number,
  callId: string,
  text = "contents",
): EventDraft => ({
  type: "tool/result",
  surfaceOp: "append",
  data: {
    turn,
    step,
    message: {
      id: `r-${callId}`,
      role: "user",
      content: [{
        type: "tool-result",
        toolCallId: callId,
        content: [{ type: "text", text }],
      }],
      source: { kind: "tool", callId },
    },
  },
});

/** One complete turn of the workload, as batches the way a harness appends them. */
export const turnBatches = (
  turn: number,
  resultText = "contents",
): ReadonlyArray<ReadonlyArray<EventDraft>> => {
  const callId = `c${turn}`;
  return [
    [
      { type: "turn/start", data: { turn } },
      { type: "step/start", data: { turn, step: 0 } },
      userDraft(`u${turn}`, `question ${turn}`),
    ],
    [assistantCallDraft(turn, 0, callId)],
    [toolCallDraft(turn, 0, callId)],
    [toolResultDraft(turn, 0, callId, resultText)],
    [
      assistantTextDraft(turn, 0, `a${turn}`),
      { type: "step/end", data: { turn, step: 0 } },
      { type: "turn/end", data: { turn, reason: { kind: "completed" } } },
    ],
  ];
};

/** A fresh temp folder. */
export const tempDir = (prefix = "palimpsest-"): string =>
  fs.mkdtempSync(path.join(os.tmpdir(), prefix));

/**
 * Runs a program needing the store over `root`, in one scope: handles it
 * opens are released when it ends.
 */
export const withStore = <A, E>(
  root: string,
  program: Effect.Effect<A, E, SessionStore | Scope.Scope>,
): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(program).pipe(Effect.provide(layerJsonlStore({ root }))),
  );

/** Runs a program needing the store, in one scope, and returns its exit. */
export const exitWithStore = <A, E>(
  root: string,
  program: Effect.Effect<A, E, SessionStore | Scope.Scope>,
): Promise<Exit.Exit<A, E>> =>
  Effect.runPromise(
    Effect.exit(Effect.scoped(program)).pipe(
      Effect.provide(layerJsonlStore({ root })),
    ),
  );

/** The failure of an exit, or throws when it succeeded or died. */
export const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) {
    throw new Error(`Expected a failure but the effect succeeded`);
  }
  const found = exit.cause.reasons.find((r) => r._tag === "Fail");
  if (found === undefined || found._tag !== "Fail") {
    throw new Error(`Expected a typed failure but found ${String(exit.cause)}`);
  }
  return found.error;
};

/** The value of an exit, or throws with its cause. */
export const failureOrValue = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isSuccess(exit)) return exit.value;
  throw new Error(`Expected a success but found ${String(exit.cause)}`);
};

/** The header line of a v3 session. */
export const headerLine = (id: string): string =>
  `{"type":"session","version":3,"id":${
    JSON.stringify(id)
  },"createdAt":0,"isSeeded":false}\n`;

/** The seeded generator of the benchmark workload, shared by the tests. */
export { mulberry32 } from "../../bench/workload.ts";
