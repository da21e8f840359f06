/**
 * What every imported log must give once the library's repair closes its
 * last turn: the events replay, the derived messages form a clean
 * transcript, the adapters' pairing pass finds nothing to repair, and each
 * provider's request (with the tools it needs) passes that provider's
 * validator.
 */
import {
  checkTranscript,
  deriveMessages,
  type Message,
  type SessionEvent,
} from "@palimpsest/session";
import { interruptedTurnClosers } from "@palimpsest/session/internal";
import { replayResult } from "@palimpsest/session";
import { toPrompt } from "@palimpsest/session/ai";
import {
  pairToolCalls,
  validateAnthropic,
  validateGemini,
  validateOpenAIChat,
  validateOpenAIResponses,
} from "@palimpsest/session/providers";
import { Result } from "effect";
import {
  anthropicBody,
  geminiBody,
  openAIChatBody,
  openAIResponsesBody,
} from "../_helpers/request_bodies.ts";
import assert from "node:assert/strict";

/** What {@link assertRepairsClean} saw. */
export interface Repaired {
  /** The events repair appended. */
  readonly closers: ReadonlyArray<SessionEvent>;
  /** The derived messages after repair. */
  readonly messages: ReadonlyArray<Message>;
  /** The provider-neutral prompt of those messages. */
  readonly prompt: ReturnType<typeof toPrompt>;
}

/**
 * Asserts that `events`, repaired, replay to a clean transcript that every
 * provider's validator accepts.
 */
export const assertRepairsClean = (
  events: ReadonlyArray<SessionEvent>,
): Repaired => {
  const closers = interruptedTurnClosers(events);
  const replayed = replayResult([...events, ...closers]);
  assert.ok(Result.isSuccess(replayed));
  const messages = deriveMessages(replayed.success);
  assert.deepEqual(checkTranscript(messages), []);
  assert.deepEqual(pairToolCalls(messages).repairs, []);
  assert.deepEqual(validateOpenAIChat(openAIChatBody(messages)), []);
  assert.deepEqual(validateOpenAIResponses(openAIResponsesBody(messages)), []);
  assert.deepEqual(validateAnthropic(anthropicBody(messages)), []);
  assert.deepEqual(validateGemini(geminiBody(messages)), []);
  return { closers, messages, prompt: toPrompt(messages) };
};
