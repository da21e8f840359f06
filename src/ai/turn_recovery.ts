/**
 * What the turn loop does after a failed request, apart from the loop
 * itself (`turn.ts`): the verdict on an overflow that forced compaction
 * could not fix, the `model-retry` events, and what `turn/end` keeps of the
 * error that ended a turn; and the paired messages of a request, with what
 * the pairing repaired kept for the outcome.
 *
 * @module
 */
import { AiError } from "effect/ai";
import { OverflowNotRecovered } from "./errors.ts";
import type { ModelRetryAttempt } from "./retry.ts";
import type {
  CompactionReport,
  RequestRepairs,
  TurnEvent,
} from "./turn_types.ts";
import type { Message } from "../core/message.ts";
import type { Session } from "../session/session.ts";
import { deriveMessages } from "../session/derive.ts";
import { pairToolCalls } from "../providers/pairing.ts";

/**
 * The messages of step `step`'s request: the session's derived messages,
 * paired; what the pairing repaired is pushed to `repairs`.
 * @internal
 */
export const pairedMessages = (
  session: Session,
  step: number,
  repairs: RequestRepairs[],
): ReadonlyArray<Message> => {
  const paired = pairToolCalls(deriveMessages(session.surface));
  if (paired.repairs.length > 0) {
    repairs.push({ step, repairs: paired.repairs });
  }
  return paired.messages;
};

/**
 * What `turn/end` keeps of the error that ended a turn: its tag, a model
 * error's reason and HTTP status when it has them, and its message.
 * @internal
 */
export const failureOf = (
  error: { readonly _tag: string; readonly message: string },
): unknown => {
  if (AiError.isAiError(error)) {
    const reason = error.reason;
    const status = "http" in reason ? reason.http?.response?.status : undefined;
    return {
      _tag: error._tag,
      reason: reason._tag,
      ...(status === undefined ? {} : { status }),
      message: error.message,
    };
  }
  return { _tag: error._tag, message: error.message };
};

/**
 * The `model-retry` event of a retry in step `step`.
 * @internal
 */
export const retryEvent = (
  turn: number,
  step: number,
  request: "answer" | "summary",
) =>
(attempt: ModelRetryAttempt): TurnEvent => ({
  type: "model-retry",
  turn,
  step,
  request,
  ...attempt,
});

/**
 * The verdict after an overflow and the forced compaction it asked for
 * (`done`, absent when the retries had run out): the typed reason the
 * recovery stops, or `undefined` when the request shrank and is sent again.
 * A compaction must bring the estimate under the size that was refused.
 * @internal
 */
export const overflowVerdict = (o: {
  readonly turn: number;
  readonly step: number;
  /** Forced compactions already made in the step. */
  readonly overflows: number;
  readonly done: CompactionReport | undefined;
  readonly refusedTokens: number;
  readonly error: AiError.AiError;
}): OverflowNotRecovered | undefined => {
  const { done, refusedTokens } = o;
  const tokens = done?.tokensAfter ?? refusedTokens;
  const reason = done === undefined
    ? "still-too-large"
    : done.refused !== undefined
    ? "compaction-refused"
    : !done.compacted
    ? "nothing-compactable"
    : tokens >= refusedTokens
    ? "still-too-large"
    : undefined;
  return reason === undefined ? undefined : new OverflowNotRecovered({
    turn: o.turn,
    step: o.step,
    reason,
    refusedTokens,
    tokens,
    attempts: o.overflows + (done === undefined ? 0 : 1),
    error: o.error,
  });
};
