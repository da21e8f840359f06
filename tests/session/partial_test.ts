/**
 * Partial answers after a crash: what `partialAnswers` reads of the
 * `assistant/partial` batches, and what repair does with them (kept for
 * people by default; appended as an interrupted message when asked, never
 * with a call).
 */
import {
  checkTranscript,
  deriveMessages,
  emptySurface,
  partialAnswers,
  replayResult,
  type SessionEvent,
} from "@palimpsest/session";
import { interruptedTurnClosers } from "@palimpsest/session/internal";
import { decodeEventResult } from "@palimpsest/session/schema";
import {
  toAnthropic,
  toOpenAIChat,
  validateAnthropic,
  validateOpenAIChat,
} from "@palimpsest/session/providers";
import { Result } from "effect";
import assert from "node:assert/strict";
import { crashed, record, source } from "../_helpers/partial_stream.ts";

const decode = (raw: ReadonlyArray<unknown>): SessionEvent[] =>
  raw.map((e) => Result.getOrThrow(decodeEventResult(e)));

Deno.test("partialAnswers reads the batches no settled answer follows", () => {
  const answers = partialAnswers(crashed());
  assert.equal(answers.length, 1);
  const [answer] = answers;
  assert.deepEqual(answer?.seqs, [7, 8]);
  assert.deepEqual(answer?.content, [
    { type: "reasoning", text: "Think." },
    { type: "text", text: "Half an answer" },
  ]);
  assert.deepEqual(answer?.calls, [
    { id: "c1", name: "read", arguments: "{}", complete: true },
    { id: "c2", name: "write", arguments: '{"pa', complete: false },
  ]);
  assert.deepEqual(answer?.source, source);
});

Deno.test("repair keeps a partial answer for people by default: nothing of it reaches the model", () => {
  const events = crashed();
  const closers = interruptedTurnClosers(events);
  assert.deepEqual(closers.map((e) => e.type), ["step/end", "turn/end"]);
  const all = [...events, ...closers];
  const surface = Result.getOrThrow(replayResult(all, emptySurface));
  const messages = deriveMessages(surface);
  assert.deepEqual(messages.map((m) => m.id), ["u", "a"]);
  // Still in the log, for the view and the transcript.
  assert.equal(partialAnswers(all).length, 1);
});

Deno.test("repair appends a partial answer as an interrupted message when asked, never with a call", () => {
  const events = crashed();
  const closers = interruptedTurnClosers(events, { partialAnswer: "append" });
  assert.deepEqual(closers.map((e) => e.type), [
    "assistant/message",
    "step/end",
    "turn/end",
  ]);
  const [message] = closers;
  assert.ok(message?.type === "assistant/message");
  assert.equal(message.data.interrupted, true);
  assert.equal(message.data.step, 1);
  assert.deepEqual(message.data.message.source, source);
  assert.deepEqual(message.data.message.content, [
    { type: "reasoning", text: "Think." },
    { type: "text", text: "Half an answer" },
  ]);
  assert.equal(message.data.stream.length, 10);
  const all = [...events, ...closers];
  const surface = Result.getOrThrow(replayResult(all, emptySurface));
  const messages = deriveMessages(surface);
  assert.deepEqual(checkTranscript(messages), []);
  assert.deepEqual(validateOpenAIChat(toOpenAIChat(messages)), []);
  assert.deepEqual(
    validateAnthropic(toAnthropic(messages)),
    [],
  );
  // A settled answer is no partial one: a second repair appends nothing.
  assert.equal(partialAnswers(all).length, 0);
  assert.deepEqual(
    interruptedTurnClosers(all, { partialAnswer: "append" }),
    [],
  );
});

Deno.test("a partial answer of a settled request, or one with no text, is not appended", () => {
  const events = crashed().slice(0, 6);
  assert.deepEqual(
    interruptedTurnClosers(
      [
        ...events,
        ...decode([{
          type: "turn/start",
          seq: 6,
          time: 6,
          data: { turn: 1 },
        }, {
          type: "step/start",
          seq: 7,
          time: 6,
          data: { turn: 1, step: 0 },
        }, {
          type: "assistant/partial",
          seq: 8,
          time: 7,
          ignorable: true,
          data: {
            turn: 1,
            step: 0,
            offset: 0,
            stream: [record({ type: "tool-params-start", id: "c", name: "x" })],
          },
        }]),
      ],
      { partialAnswer: "append" },
    ).map((e) => e.type),
    ["step/end", "turn/end", "turn/end"],
  );
});
