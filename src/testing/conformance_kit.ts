/**
 * What the store conformance suite's parts share: the suite's context (its
 * test registration, the runtime of the layer under test, fresh ids, seeded
 * sessions), the drafts of its workload, the one way it checks a refusal
 * (by tag and fields), and the writer processes it speaks to line by line.
 * It owns no test; `store_conformance.ts` assembles the parts.
 *
 * @internal
 * @module
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import * as Cause from "effect/Cause";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import type * as Layer from "effect/Layer";
import * as ManagedRuntime from "effect/ManagedRuntime";
import * as Result from "effect/Result";
import type * as Scope from "effect/Scope";
import { Draft } from "../session/drafts.ts";
import type { EventDraft } from "../session/session.ts";
import type { SessionEvent } from "../core/event.ts";
import type {
  ContentBlock,
  MessageSource,
  ToolResultBlock,
} from "../core/message.ts";
import { Session } from "../session/session.ts";
import { type SessionHandle, SessionStore } from "../store/store.ts";

/**
 * Registers one test: `Deno.test` by default; `test` of `node:test` has the
 * same shape.
 */
export type RegisterTest = (
  title: string,
  body: () => Promise<void>,
) => void;

/** A signal a test sends to a writer process. */
export type WriterSignal = "SIGKILL" | "SIGTERM" | "SIGINT";

/**
 * A writer in another process, speaking the line protocol of
 * `runWriterProcess`: it reads lines on stdin and prints lines on stdout.
 */
export interface WriterProcess {
  /** The next line it printed; `undefined` once its output ends. */
  readonly line: () => Promise<string | undefined>;
  /** Sends a line to its stdin. */
  readonly send: (line: string) => Promise<void>;
  /** Closes its stdin: a holder then releases the session and exits. */
  readonly end: () => Promise<void>;
  /** Sends a signal. */
  readonly kill: (signal: WriterSignal) => void;
  /** Its exit code and signal, once its output is drained. */
  readonly status: Promise<{
    readonly code: number | null;
    readonly signal: string | null;
  }>;
}

/**
 * Starts `command args` as a {@link WriterProcess}, its stderr inherited.
 * `node:child_process`, so the same code runs under Deno and Node.
 */
export const spawnWriterProcess = (
  command: string,
  args: ReadonlyArray<string>,
): WriterProcess => {
  const child = spawn(command, [...args], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const queued: string[] = [];
  const waiting: Array<(line: string | undefined) => void> = [];
  let closed = false;
  const lines = createInterface({ input: child.stdout });
  lines.on("line", (line) => {
    const next = waiting.shift();
    if (next === undefined) queued.push(line);
    else next(line);
  });
  const drained = new Promise<void>((resolve) =>
    lines.once("close", () => {
      closed = true;
      for (const next of waiting.splice(0)) next(undefined);
      resolve();
    })
  );
  const exited = new Promise<{ code: number | null; signal: string | null }>(
    (resolve) =>
      child.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    line: () => {
      const line = queued.shift();
      if (line !== undefined || closed) return Promise.resolve(line);
      return new Promise((resolve) => waiting.push(resolve));
    },
    send: (text) =>
      new Promise((resolve) => {
        // A write to a process that has exited is dropped, as a closed
        // pipe would drop it.
        if (!child.stdin.writable) return resolve();
        child.stdin.write(`${text}\n`, () => resolve());
      }),
    end: () =>
      new Promise((resolve) => {
        if (!child.stdin.writable) return resolve();
        child.stdin.end(() => resolve());
      }),
    kill: (signal) => {
      child.kill(signal);
    },
    status: Promise.all([exited, drained]).then(([status]) => status),
  };
};

/**
 * A small seeded PRNG (mulberry32), uniform in [0, 1): the same seed, the
 * same interruption points.
 */
export const mulberry32 = (seed: number): () => number => {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
};

/**
 * Asserts that `error` is tagged `tag` and that each given field deep-equals
 * its value: a refusal is checked by its tag and fields, never its message.
 */
export const thenFails = (
  error: unknown,
  tag: string,
  fields: Readonly<Record<string, unknown>> = {},
): void => {
  const found = typeof error === "object" && error !== null
    ? Reflect.get(error, "_tag")
    : undefined;
  assert.equal(found, tag);
  for (const [key, value] of Object.entries(fields)) {
    assert.deepEqual(
      Reflect.get(Object(error), key),
      value,
      `field ${key} of ${tag}`,
    );
  }
};

/**
 * The typed failure of an exit or a result; throws when it succeeded or
 * when an exit holds a defect.
 */
export const failureOf = <A, E>(
  outcome: Exit.Exit<A, E> | Result.Result<A, E>,
): E => {
  if (!Exit.isExit(outcome)) {
    if (Result.isSuccess(outcome)) {
      throw new Error(`Expected a failure but the result is a success`);
    }
    return outcome.failure;
  }
  const exit = outcome;
  if (Exit.isSuccess(exit)) {
    throw new Error(`Expected a failure but the effect succeeded`);
  }
  if (Cause.hasDies(exit.cause)) {
    throw new Error(
      `Expected a typed failure but found a defect: ${
        Cause.pretty(exit.cause)
      }`,
    );
  }
  const found = exit.cause.reasons.find((r) => r._tag === "Fail");
  if (found === undefined || found._tag !== "Fail") {
    throw new Error(`Expected a typed failure but found ${String(exit.cause)}`);
  }
  return found.error;
};

/** The source of the suites' assistant messages. */
const testModel = { kind: "model", provider: "test", model: "m" } as const;

/**
 * `assistant/message`, appended, with `content` by `source` (the test model
 * unless given) and an empty stream.
 */
export const assistantMessageDraft = (
  turn: number,
  step: number,
  id: string,
  content: ReadonlyArray<ContentBlock>,
  source: Extract<MessageSource, { kind: "model" }> = testModel,
): EventDraft => ({
  type: "assistant/message",
  surfaceOp: "append",
  data: {
    turn,
    step,
    stream: [],
    message: { id, role: "assistant", content, source },
  },
});

/**
 * `tool/result`, appended: message `id` holding `block`, by the tool that
 * `block` answers, with the `error` and `meta` of `extra` when given.
 */
export const toolResultMessageDraft = (
  turn: number,
  step: number,
  id: string,
  block: ToolResultBlock,
  extra: { readonly error?: { name: string; code: string }; meta?: unknown } =
    {},
): EventDraft => ({
  type: "tool/result",
  surfaceOp: "append",
  data: {
    turn,
    step,
    message: {
      id,
      role: "user",
      content: [block],
      source: { kind: "tool", callId: block.toolCallId },
    },
    ...extra,
  },
});

/** `tool/result`, appended, answering `callId` with `text`. */
const toolResult = (
  turn: number,
  callId: string,
  text: string,
  extra: { readonly meta?: unknown } = {},
): EventDraft =>
  toolResultMessageDraft(turn, 0, `r-${callId}`, {
    type: "tool-result",
    toolCallId: callId,
    content: [{ type: "text", text }],
  }, extra);

/** The suite's drafts, at turn 0, step 0. */
export const drafts = {
  /** A user message, appended; its text defaults to its id. */
  user: (id: string, text: string = id): EventDraft => Draft.user(text, { id }),
  /** An assistant message with text and `read` tool calls, appended. */
  assistant: (
    id: string,
    text: string,
    calls: ReadonlyArray<string> = [],
  ): EventDraft =>
    Draft.assistant({
      id,
      turn: 0,
      step: 0,
      provider: "p",
      model: "m",
      content: text === "" ? [] : text,
      toolCalls: calls.map((callId) => ({
        id: callId,
        name: "read",
        arguments: "{}",
      })),
    }),
  /** A `tool/result` answering `callId`, appended, with `meta`. */
  toolResult: (callId: string, text: string): EventDraft =>
    toolResult(0, callId, text, { meta: { tool: "read" } }),
} as const;

/**
 * One complete turn, as batches the way a harness appends them; the tool
 * answers with `resultText`.
 */
export const turnBatches = (
  turn: number,
  resultText = "contents",
): ReadonlyArray<ReadonlyArray<EventDraft>> => {
  const callId = `c${turn}`;
  return [
    [
      { type: "turn/start", data: { turn } },
      { type: "step/start", data: { turn, step: 0 } },
      drafts.user(`u${turn}`, `question ${turn}`),
    ],
    [assistantMessageDraft(turn, 0, `a-${callId}`, [
      { type: "text", text: "let me look" },
      { type: "tool-call", id: callId, name: "read", arguments: "{}" },
    ])],
    [{
      type: "tool/call",
      data: { turn, step: 0, callId, name: "read", arguments: "{}" },
    }],
    [toolResult(turn, callId, resultText)],
    [
      assistantMessageDraft(turn, 0, `a${turn}`, [{
        type: "text",
        text: "done",
      }]),
      { type: "step/end", data: { turn, step: 0 } },
      { type: "turn/end", data: { turn, reason: { kind: "completed" } } },
    ],
  ];
};

/** The header of a session the suite creates. */
export const header = (
  id: string,
): { id: string; createdAt: number; isSeeded: false } => ({
  id,
  createdAt: 1,
  isSeeded: false,
});

/** Events in one turn of the workload. */
export const TURN: number = turnBatches(0).flat().length;

/** Runs `f` with the store. */
export const withStore = <A, E, R>(
  f: (store: SessionStore) => Effect.Effect<A, E, R>,
): Effect.Effect<A, E, R | SessionStore> =>
  Effect.gen(function* () {
    return yield* f(yield* SessionStore);
  });

/** The seqs of events. */
export const seqsOf = (events: ReadonlyArray<SessionEvent>): number[] =>
  events.map((e) => e.seq);

/** `from` up to `to`, not included. */
export const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from }, (_, i) => from + i);

/** The suite as its parts see it: one layer under test. */
export interface Suite {
  /** Registers a test titled after the layer; each builds the layer once. */
  readonly test: (title: string, body: () => Promise<void>) => void;
  /** Runs a program against the current test's store. */
  readonly run: <A, E>(
    program: Effect.Effect<A, E, SessionStore | Scope.Scope>,
  ) => Promise<A>;
  /** Runs a program against the current test's store, to its exit. */
  readonly exitOf: <A, E>(
    program: Effect.Effect<A, E, SessionStore | Scope.Scope>,
  ) => Promise<Exit.Exit<A, E | unknown>>;
  /** A session id no other test uses. */
  readonly fresh: (what: string) => string;
  /** Fails when the layer reports a resource still held. */
  readonly assertNothingHeld: (when: string) => void;
  /** Creates `id` with `turns` complete turns. */
  readonly seeded: (
    id: string,
    turns?: number,
  ) => Effect.Effect<void, unknown, SessionStore>;
  /**
   * Creates `id` with `turns` complete turns, then runs `f` with it open
   * for writing.
   */
  readonly writeSeeded: <A, E>(
    id: string,
    turns: number,
    f: (
      writer: SessionHandle,
      store: SessionStore,
    ) => Effect.Effect<A, E, SessionStore>,
  ) => Effect.Effect<A, unknown, SessionStore>;
  /** Every event stored for `id`. */
  readonly readAll: (
    id: string,
  ) => Effect.Effect<ReadonlyArray<SessionEvent>, unknown, SessionStore>;
}

/** The suite's context for one layer. */
export const makeSuite = (options: {
  readonly name: string;
  readonly layer: () => Layer.Layer<SessionStore, unknown>;
  readonly held?: () => ReadonlyArray<string>;
  readonly test?: RegisterTest;
}): Suite => {
  const register: RegisterTest = options.test ?? defaultTest;
  let counter = 0;
  // Each test builds the layer once and runs all its programs against that
  // store (a memory store lives as long as its runtime).
  let runtime: ManagedRuntime.ManagedRuntime<SessionStore, unknown> | undefined;
  const current = () => {
    assert.ok(runtime !== undefined, "run outside a test");
    return runtime;
  };
  const seeded: Suite["seeded"] = (id, turns = 1) =>
    withStore((store) =>
      Effect.scoped(Effect.gen(function* () {
        const writer = yield* store.create(header(id));
        for (let turn = 0; turn < turns; turn++) {
          for (const batch of turnBatches(turn)) {
            yield* store.append(writer, batch);
          }
        }
      }))
    );
  return {
    test: (title, body) =>
      register(`${options.name}: ${title}`, async () => {
        runtime = ManagedRuntime.make(options.layer());
        try {
          await body();
        } finally {
          await runtime.dispose();
          runtime = undefined;
        }
      }),
    run: (program) => current().runPromise(Effect.scoped(program)),
    exitOf: (program) =>
      current().runPromise(Effect.exit(Effect.scoped(program))),
    fresh: (what) => `${what}-${Date.now().toString(36)}-${counter++}`,
    assertNothingHeld: (when) => {
      assert.deepEqual(options.held?.() ?? [], [], `${when}: still held`);
    },
    seeded,
    writeSeeded: (id, turns, f) =>
      withStore((store) =>
        Effect.andThen(
          seeded(id, turns),
          store.withSession(id, (writer) => f(writer, store)),
        )
      ),
    readAll: (id) =>
      withStore((store) =>
        Effect.gen(function* () {
          const reader = yield* Effect.scoped(store.open(id));
          return Result.getOrThrow(Session.events(reader.session));
        })
      ),
  };
};

/** `Deno.test`, or a refusal to guess under another runtime. */
export const defaultTest: RegisterTest = (title, body) => {
  if (typeof Deno === "undefined") {
    throw new Error(
      `Pass a test function in the options (test of node:test) outside Deno`,
    );
  }
  Deno.test(title, body);
};
