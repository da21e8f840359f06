/**
 * The tagged errors of the OpenAI Agents SDK session: what it refuses before
 * storing anything. The store's and the fold's own errors pass through as
 * they are.
 *
 * @module
 */
import { quote } from "../core/quote.ts";
import {
  type TaggedErrorBases,
  taggedErrorBases,
} from "../core/tagged_error.ts";

// The tags, each once; every class below extends the base of its tag.
const Tagged: TaggedErrorBases<
  | "UnknownFunctionCall"
  | "NoRewindPoint"
> = taggedErrorBases();

/**
 * A `function_call_result` whose call is neither in the batch nor in the
 * session: the log keeps a result only beside the call it answers.
 */
export class UnknownFunctionCall extends Tagged.UnknownFunctionCall<{
  /** The session id. */
  readonly sessionId: string;
  /** The call id the result answers. */
  readonly callId: string;
  /** The result's index in the batch. */
  readonly index: number;
}> {
  /** A sentence for people. */
  override readonly message: string = `Item ${
    quote(this.index)
  } answers function call ${quote(this.callId)}, which session ${
    quote(this.sessionId)
  } does not hold; add the call before its result`;
}

/**
 * No point to rewind to for a `popItem` or `clearSession`: the session's
 * log starts with what would be removed (a session that module did not
 * create has no first log-only event to go back to).
 */
export class NoRewindPoint extends Tagged.NoRewindPoint<{
  /** The session id. */
  readonly sessionId: string;
  /** How many items were to be kept. */
  readonly keep: number;
}> {
  /** A sentence for people. */
  override readonly message: string = `No point of session ${
    quote(this.sessionId)
  }'s log keeps its first ${
    quote(this.keep)
  } items; a session created by makeAgentsSession always has one`;
}
