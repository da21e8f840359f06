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
import * as Data from "effect/Data";
import type { SessionSeq } from "../seq.ts";
import { quote } from "../quote.ts";

/**
 * A compaction was asked for while another one is open in the log: its
 * `compaction/start` has no `compaction/end` yet. The open start is the
 * durable lock.
 */
export class CompactionInProgress extends Data.Error<{
  /** The id of the open compaction. */
  readonly compactionId: string;
  /** The seq of its `compaction/start`. */
  readonly startSeq: SessionSeq;
}> {
  /** The tag. */
  readonly _tag: "CompactionInProgress" = "CompactionInProgress";
  /** A sentence for people. */
  override readonly message: string = `Compaction ${
    quote(this.compactionId)
  } started at seq ${
    quote(this.startSeq)
  } is still open; wait for it to end or release it with releaseStaleCompaction`;
}

/** The model's summary is not smaller than the range it would replace. */
export class SummaryNotSmaller extends Data.Error<{
  /** The compaction id. */
  readonly compactionId: string;
  /** The estimated tokens of the summary message. */
  readonly summaryTokens: number;
  /** The estimated tokens of the messages it would replace. */
  readonly rangeTokens: number;
}> {
  /** The tag. */
  readonly _tag: "SummaryNotSmaller" = "SummaryNotSmaller";
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
export class CompactionRangeChanged extends Data.Error<{
  /** The compaction id. */
  readonly compactionId: string;
  /** The first node of the range as selected. */
  readonly startSeq: SessionSeq;
  /** The last node of the range as selected. */
  readonly endSeq: SessionSeq;
}> {
  /** The tag. */
  readonly _tag: "CompactionRangeChanged" = "CompactionRangeChanged";
  /** A sentence for people. */
  override readonly message: string = `Range ${quote(this.startSeq)}..${
    quote(this.endSeq)
  } of compaction ${
    quote(this.compactionId)
  } changed while it was summarized; compact again`;
}
