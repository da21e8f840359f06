/**
 * The tagged errors of the compaction engine and the turn loop: refusals
 * the model integration makes on top of the history rules.
 *
 * Each refusal has its own class with the seqs and figures as fields, so a
 * caller narrows with `Effect.catchTag`. The model's own failures stay
 * `effect/ai` `AiError`s and the store's stay the store's.
 *
 * @module
 */
import type { AiError } from "effect/ai";
import type { SessionSeq } from "../core/seq.ts";
import { quote } from "../core/quote.ts";
import {
  type TaggedErrorBases,
  taggedErrorBases,
} from "../core/tagged_error.ts";

// The tags, each once; every class below extends the base of its tag.
const Tagged: TaggedErrorBases<
  | "CompactionInProgress"
  | "TurnInProgress"
  | "EmptySummary"
  | "SummaryNotSmaller"
  | "CompactionRangeChanged"
  | "OverflowNotRecovered"
> = taggedErrorBases();

/**
 * The message of a refusal to start while `what`, started at `startSeq`, is
 * open: a running one is waited for, otherwise `closeIt` says what to do.
 */
const stillOpen = (
  what: string,
  startSeq: SessionSeq,
  live: boolean,
  closeIt: string,
): string =>
  `${what} started at seq ${quote(startSeq)} is still open; ${
    live ? "it is running in this process, wait for it to end" : closeIt
  }`;

/**
 * A compaction was asked for while another one is open in the log: its
 * `compaction/start` has no `compaction/end` yet. The open start is the
 * durable lock. `live` tells whether a running compaction of this process
 * holds it (wait for it), or whether it was abandoned by a crash and the
 * caller asked not to close it (`onOpen: "refuse"`; `store.repair` closes
 * it).
 */
export class CompactionInProgress extends Tagged.CompactionInProgress<{
  /** The id of the open compaction. */
  readonly compactionId: string;
  /** The seq of its `compaction/start`. */
  readonly startSeq: SessionSeq;
  /** True when a running compaction of this process holds it. */
  readonly live: boolean;
}> {
  /** A sentence for people. */
  override readonly message: string = stillOpen(
    `Compaction ${quote(this.compactionId)}`,
    this.startSeq,
    this.live,
    "it was abandoned, close it with store.repair",
  );
}

/**
 * A turn was asked for while one is open in the log: a `turn/start`
 * without its `turn/end`. `live` tells whether a running `runTurn` of this
 * process holds it (wait for it), or whether a crash left it open and the
 * caller asked not to close it (`onOpen: "refuse"`; `store.repair` closes
 * it). A turn is never started inside an open one.
 */
export class TurnInProgress extends Tagged.TurnInProgress<{
  /** The number of the open turn. */
  readonly turn: number;
  /** The seq of its `turn/start`. */
  readonly startSeq: SessionSeq;
  /** True when a running turn of this process holds it. */
  readonly live: boolean;
}> {
  /** A sentence for people. */
  override readonly message: string = stillOpen(
    `Turn ${quote(this.turn)}`,
    this.startSeq,
    this.live,
    "a crash left it open, close it with store.repair",
  );
}

/**
 * The model's summary is empty or blank (whitespace only): it would
 * replace the range by nothing, and the adapters drop an empty message, so
 * the model would see nothing of that history. The range stays.
 */
export class EmptySummary extends Tagged.EmptySummary<{
  /** The compaction id. */
  readonly compactionId: string;
  /** The first node of the range it would have replaced. */
  readonly startSeq: SessionSeq;
  /** The last node of that range. */
  readonly endSeq: SessionSeq;
}> {
  /** A sentence for people. */
  override readonly message: string = `Summary of compaction ${
    quote(this.compactionId)
  } is empty or blank and would erase range ${quote(this.startSeq)}..${
    quote(this.endSeq)
  }; check that the model returns text from generateText`;
}

/** The model's summary is not smaller than the range it would replace. */
export class SummaryNotSmaller extends Tagged.SummaryNotSmaller<{
  /** The compaction id. */
  readonly compactionId: string;
  /** The estimated tokens of the summary message. */
  readonly summaryTokens: number;
  /** The estimated tokens of the messages it would replace. */
  readonly rangeTokens: number;
}> {
  /** A sentence for people. */
  override readonly message: string = `Summary of compaction ${
    quote(this.compactionId)
  } has ${quote(this.summaryTokens)} tokens, not fewer than the ${
    quote(this.rangeTokens)
  } it would replace; ask for a shorter summary`;
}

/**
 * The surface range being summarized changed while the model was writing
 * the summary (a node of it was replaced or left the surface), so the
 * summary may not stand for what is there now.
 */
export class CompactionRangeChanged extends Tagged.CompactionRangeChanged<{
  /** The compaction id. */
  readonly compactionId: string;
  /** The first node of the range as selected. */
  readonly startSeq: SessionSeq;
  /** The last node of the range as selected. */
  readonly endSeq: SessionSeq;
}> {
  /** A sentence for people. */
  override readonly message: string = `Range ${quote(this.startSeq)}..${
    quote(this.endSeq)
  } of compaction ${
    quote(this.compactionId)
  } changed while it was summarized; compact again`;
}

/**
 * A request the provider refused for its length (a context overflow) that
 * forced compaction could not make small enough. The size the provider
 * refused is taken as the ceiling, whatever the estimate said: each forced
 * compaction must bring the estimate under a fraction of it. `reason`
 * says why it stopped: `nothing-compactable` (no range could be
 * summarized: what is left is the system prompt and the newest messages,
 * or a tool call with its result), `compaction-refused` (the compaction
 * failed or was refused; its report says why), or `still-too-large` (the
 * provider refused every smaller request the retries allowed, or a
 * compaction did not shrink the estimate). `error` is the provider's last
 * refusal.
 */
export class OverflowNotRecovered extends Tagged.OverflowNotRecovered<{
  /** The turn. */
  readonly turn: number;
  /** The step whose request overflowed. */
  readonly step: number;
  /** Why the recovery stopped. */
  readonly reason:
    | "nothing-compactable"
    | "compaction-refused"
    | "still-too-large";
  /** The estimated tokens of the last request the provider refused. */
  readonly refusedTokens: number;
  /** The estimated tokens of the messages when the recovery stopped. */
  readonly tokens: number;
  /** The forced compactions tried. */
  readonly attempts: number;
  /** The provider's last refusal. */
  readonly error: AiError.AiError;
}> {
  /** A sentence for people. */
  override readonly message: string = `Request of step ${
    quote(this.step)
  } of turn ${quote(this.turn)} overflowed the context window at about ${
    quote(this.refusedTokens)
  } tokens and compaction could not make it smaller (${quote(this.reason)}, ${
    quote(this.tokens)
  } tokens left after ${
    quote(this.attempts)
  } attempts); shorten the newest messages or start a new session`;
}
