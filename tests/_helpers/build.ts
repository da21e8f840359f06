/**
 * The test builders, in one place:
 *
 * - raw event lines (parsed JSON, canonical key order), the v3 header line
 *   and a strict decoder that fails the test when a builder is wrong: the
 *   builders return plain objects so a test can break exactly one rule by
 *   spreading or deleting a key, and `decoded` turns a valid one into a
 *   `SessionEvent`;
 * - drafts for the history tests (`drafts.user`, ...), made with the
 *   library's own `Draft` where they are the same thing, and the runners
 *   `sessionOf`, `ok`, `fails`;
 * - the drafts of the standard workload (`assistantCallDraft`,
 *   ..., `turnBatches`) for the persistence tests.
 *
 * @module
 */
import { Effect, Result } from "effect";
import {
  compact,
  Draft,
  type EventDraft,
  Session,
  type SessionEvent,
  SessionSeq,
} from "@palimpsest/session";
import type { DecodeOptions } from "@palimpsest/session/schema";
import { decodeEventResult } from "@palimpsest/session/schema";
import {
  assistantMessageDraft,
  drafts as storeDrafts,
  toolResultMessageDraft,
} from "../../src/testing/conformance_kit.ts";

/** One complete turn of the workload, as batches the way a harness appends them. */
export {
  assistantMessageDraft,
  toolResultMessageDraft,
  turnBatches,
} from "../../src/testing/conformance_kit.ts";

/** A raw event: a parsed JSON object. */
export type Raw = Record<string, unknown>;

/** A surface op as written in a line. */
export type RawOp = "append" | "prepend" | {
  readonly op: "replace";
  readonly startSeq: number;
  readonly endSeq: number;
} | {
  readonly op: "rewind";
  readonly toSeq: number;
};

/** Options shared by surface builders. */
export interface SurfaceOptions {
  /** Where the event goes; `"append"` by default. */
  readonly op?: RawOp;
  /** Sources, written as given. */
  readonly sources?: ReadonlyArray<number>;
  /** The event time; `seq * 10` by default. */
  readonly time?: number;
}

/** `SessionSeq.make`, short. */
export const s = (n: number): SessionSeq => SessionSeq.make(n);

/** A replace op over `startSeq..endSeq`. */
export const replace = (startSeq: number, endSeq: number): RawOp => ({
  op: "replace",
  startSeq,
  endSeq,
});

/** A rewind op to the point right after `toSeq`. */
export const rewindTo = (toSeq: number): RawOp => ({ op: "rewind", toSeq });

const envelope = (
  type: string,
  seq: number,
  data: unknown,
  options: SurfaceOptions | undefined,
  surface: boolean,
): Raw => {
  const raw: Raw = { type, seq, time: options?.time ?? seq * 10, data };
  if (surface) raw.surfaceOp = options?.op ?? "append";
  if (options?.sources !== undefined) raw.sourceEventSeqs = options.sources;
  return raw;
};

/** Text content. */
export const text = (
  value: string,
): ReadonlyArray<{ type: "text"; text: string }> => [{
  type: "text",
  text: value,
}];

/** A `user/message` line. */
export const user = (
  seq: number,
  options?: SurfaceOptions & {
    readonly id?: string;
    readonly text?: string;
    readonly source?: Raw;
  },
): Raw =>
  envelope(
    "user/message",
    seq,
    {
      id: options?.id ?? `u${seq}`,
      role: "user",
      content: text(options?.text ?? `user ${seq}`),
      source: options?.source ?? { kind: "user" },
    },
    options,
    true,
  );

/** A `system/message` line (empty `text` means no prompt). */
export const system = (
  seq: number,
  options?: SurfaceOptions & { readonly text?: string },
): Raw =>
  envelope(
    "system/message",
    seq,
    {
      turn: 0,
      step: 0,
      message: {
        id: `sys${seq}`,
        role: "system",
        content: options?.text === "" ? [] : text(options?.text ?? "be brief"),
        source: { kind: "plugin", plugin: "prompt" },
      },
    },
    options,
    true,
  );

/** An `assistant/message` line, optionally issuing one tool call. */
export const assistant = (
  seq: number,
  options?: SurfaceOptions & {
    readonly callId?: string;
    readonly empty?: boolean;
  },
): Raw => {
  const content: Array<Raw> = options?.empty === true
    ? []
    : [{ type: "text", text: `answer ${seq}` }];
  if (options?.callId !== undefined) {
    content.push({
      type: "tool-call",
      id: options.callId,
      name: "read",
      arguments: "{}",
    });
  }
  return envelope(
    "assistant/message",
    seq,
    {
      turn: 0,
      step: 0,
      message: {
        id: `a${seq}`,
        role: "assistant",
        content,
        source: { kind: "model", provider: "p", model: "m" },
      },
      stream: [],
    },
    options,
    true,
  );
};

/** Fields of a `tool/result` line. */
export interface ToolResultOptions extends SurfaceOptions {
  readonly callId?: string;
  readonly id?: string;
  readonly content?: ReadonlyArray<Raw>;
  readonly isError?: boolean | undefined;
  readonly error?: Raw | undefined;
  readonly meta?: unknown;
  readonly turn?: number;
  readonly step?: number;
}

/** The data of a `tool/result` line. */
export const toolResultData = (
  seq: number,
  options?: ToolResultOptions,
): Raw => {
  const callId = options?.callId ?? `c${seq}`;
  const block: Raw = {
    type: "tool-result",
    toolCallId: callId,
    content: options?.content ?? text(`result ${seq}`),
  };
  if (options?.isError !== undefined) block.isError = options.isError;
  const data: Raw = {
    turn: options?.turn ?? 0,
    step: options?.step ?? 0,
    message: {
      id: options?.id ?? `r${seq}`,
      role: "user",
      content: [block],
      source: { kind: "tool", callId },
    },
  };
  if (options?.error !== undefined) data.error = options.error;
  if (options?.meta !== undefined) data.meta = options.meta;
  return data;
};

/** A `tool/result` line. */
export const toolResult = (seq: number, options?: ToolResultOptions): Raw =>
  envelope("tool/result", seq, toolResultData(seq, options), options, true);

/** A `tool/result` line with prebuilt data. */
export const toolResultWith = (
  seq: number,
  data: unknown,
  options?: SurfaceOptions,
): Raw => envelope("tool/result", seq, data, options, true);

/** A log-only line of any type. */
export const logOnly = (
  type: string,
  seq: number,
  data: unknown,
  extra?: Raw,
): Raw => ({ type, seq, time: seq * 10, data, ...extra });

/** A `turn/start` line. */
export const turnStart = (seq: number): Raw =>
  logOnly("turn/start", seq, { turn: 0 });

/** A `tool/call` line. */
export const toolCall = (seq: number, callId: string): Raw =>
  logOnly("tool/call", seq, {
    turn: 0,
    step: 0,
    callId,
    name: "read",
    arguments: "{}",
  });

/** An opaque line: unknown type, `ignorable: true`, keys out of order. */
export const opaque = (seq: number, extra?: Raw): Raw => ({
  ignorable: true,
  data: { anything: [1, "two", null] },
  type: "future/thing",
  time: seq * 10,
  seq,
  ...extra,
});

/** The header line of a v3 session, as text ending in a newline. */
export const headerLine = (id: string): string =>
  `{"type":"session","version":3,"id":${
    JSON.stringify(id)
  },"createdAt":0,"isSeeded":false}\n`;

/** Decodes a line that must be valid; throws (failing the test) if not. */
export const decoded = (
  raw: unknown,
  options?: DecodeOptions,
): SessionEvent => {
  const result = decodeEventResult(raw, options);
  if (Result.isFailure(result)) {
    throw new Error(
      `Expected a valid test event but decoding failed with ${result.failure._tag}`,
    );
  }
  return result.success;
};

// ---------------------------------------------------------------------------
// Drafts for the history tests

/** Drafts at turn 0, step 0: the history tests' vocabulary. */
export const drafts = {
  ...storeDrafts,
  /** A system message by the plugin `test`, appended. */
  system: (id: string, text: string): EventDraft =>
    Draft.system(text, { id, plugin: "test" }),
  /** A `tool/call` of `read`. */
  toolCall: (callId: string): EventDraft =>
    Draft.toolCall({ turn: 0, step: 0, callId, name: "read", arguments: "{}" }),
} as const;

/** A fresh session with the drafts appended. */
export const sessionOf = (
  list: ReadonlyArray<EventDraft>,
  id = "s",
): Session =>
  Effect.runSync(
    Session.appendAll(
      Session.make({ id, createdAt: 0, isSeeded: false }),
      list,
    ),
  );

/** Runs an effect that must succeed. */
export const ok = <A, E>(effect: Effect.Effect<A, E>): A =>
  Effect.runSync(effect);

/** Runs an effect that must fail and returns its error. */
export const fails = <A, E>(effect: Effect.Effect<A, E>): E =>
  Effect.runSync(Effect.flip(effect));

/** `session` compacted over `startSeq..endSeq`, which must succeed. */
export const compacted = (
  session: Session,
  startSeq: number,
  endSeq: number,
  summary: string,
  compactionId: string,
): Session =>
  ok(compact(session, {
    startSeq: s(startSeq),
    endSeq: s(endSeq),
    summary,
    compactionId,
  }));

// ---------------------------------------------------------------------------
// Drafts of the standard workload

/** `assistant/message` with one `tool-call` block. */
export const assistantCallDraft = (
  turn: number,
  step: number,
  callId: string,
): EventDraft =>
  assistantMessageDraft(turn, step, `a-${callId}`, [
    { type: "text", text: "let me look" },
    { type: "tool-call", id: callId, name: "read", arguments: "{}" },
  ]);

/** `assistant/message` with text only. */
export const assistantTextDraft = (
  turn: number,
  step: number,
  id: string,
): EventDraft =>
  assistantMessageDraft(turn, step, id, [{ type: "text", text: "done" }]);

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
): EventDraft =>
  toolResultMessageDraft(turn, step, `r-${callId}`, {
    type: "tool-result",
    toolCallId: callId,
    content: [{ type: "text", text }],
  });

/**
 * A new `assistant/message` at turn 1 calling `ls` (`c7`), by provider `p`,
 * with no result: what the tests over
 * `tests/fixtures/stored/shadowed-unanswered-call.jsonl` append to it.
 */
export const unansweredLs: EventDraft = assistantMessageDraft(1, 0, "a7", [
  { type: "tool-call", id: "c7", name: "ls", arguments: "{}" },
], { kind: "model", provider: "p", model: "m" });
