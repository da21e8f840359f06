/**
 * Small draft builders and runners for the history tests.
 */
import {
  type EventDraft,
  Session,
  type SessionSeq,
  SessionSeq as Seq,
} from "@palimpsest/session";
import { Effect } from "effect";

/** A seq from a number. */
export const s = (n: number): SessionSeq => Seq.make(n);

/** A user message draft, appended. */
export const user = (id: string, text = id): EventDraft => ({
  type: "user/message",
  surfaceOp: "append",
  data: {
    id,
    role: "user",
    content: [{ type: "text", text }],
    source: { kind: "user" },
  },
});

/** A system message draft, appended. */
export const system = (id: string, text: string): EventDraft => ({
  type: "system/message",
  surfaceOp: "append",
  data: {
    turn: 0,
    step: 0,
    message: {
      id,
      role: "system",
      content: text === "" ? [] : [{ type: "text", text }],
      source: { kind: "plugin", plugin: "test" },
    },
  },
});

/** An assistant message draft with text and tool calls, appended. */
export const assistant = (
  id: string,
  text: string,
  calls: ReadonlyArray<string> = [],
): EventDraft => ({
  type: "assistant/message",
  surfaceOp: "append",
  data: {
    turn: 0,
    step: 0,
    stream: [],
    message: {
      id,
      role: "assistant",
      content: [
        ...(text === "" ? [] : [{ type: "text" as const, text }]),
        ...calls.map((callId) => ({
          type: "tool-call" as const,
          id: callId,
          name: "read",
          arguments: "{}",
        })),
      ],
      source: { kind: "model", provider: "p", model: "m" },
    },
  },
});

/** A `tool/call` draft. */
export const toolCall = (callId: string): EventDraft => ({
  type: "tool/call",
  data: { turn: 0, step: 0, callId, name: "read", arguments: "{}" },
});

/** A `tool/result` draft answering `callId`, appended. */
export const toolResult = (callId: string, text: string): EventDraft => ({
  type: "tool/result",
  surfaceOp: "append",
  data: {
    turn: 0,
    step: 0,
    message: {
      id: `r-${callId}`,
      role: "user",
      source: { kind: "tool", callId },
      content: [{
        type: "tool-result",
        toolCallId: callId,
        content: [{ type: "text", text }],
      }],
    },
    meta: { tool: "read" },
  },
});

/** A fresh session with the drafts appended. */
export const sessionOf = (
  drafts: ReadonlyArray<EventDraft>,
  id = "s",
): Session =>
  Effect.runSync(
    Session.appendAll(
      Session.make({ id, createdAt: 0, isSeeded: false }),
      drafts,
    ),
  );

/** Runs an effect that must succeed. */
export const ok = <A, E>(effect: Effect.Effect<A, E>): A =>
  Effect.runSync(effect);

/** Runs an effect that must fail and returns its error. */
export const fails = <A, E>(effect: Effect.Effect<A, E>): E =>
  Effect.runSync(Effect.flip(effect));
