/**
 * The tagged errors of history manipulation: refusals of compactions, system
 * prompt changes and forks, checked before anything is appended.
 *
 * Each refusal has its own class, named after the rule, with the seqs as
 * fields so a caller can narrow with `Effect.catchTag`. Where a refusal is
 * exactly one of the fold's rules (a range endpoint off the surface, an
 * inverted range, a prune target that is not a tool result) the fold's own
 * error from `errors.ts` is reused instead. This module owns the errors, not
 * the checks.
 *
 * @module
 */
import type { SessionSeq } from "../core/seq.ts";
import { quote } from "../core/quote.ts";
import {
  type TaggedErrorBases,
  taggedErrorBases,
} from "../core/tagged_error.ts";

// The tags, each once; every class below extends the base of its tag.
const Tagged: TaggedErrorBases<
  | "CompactionShadowsSystemHead"
  | "CompactionSplitsToolPair"
  | "SystemPromptNotAtHead"
  | "ForkPointOutOfRange"
  | "RewindDropsUnexpectedTurns"
  | "CompactionNotFound"
> = taggedErrorBases();

/** A compaction range that would shadow the protected system head. */
export class CompactionShadowsSystemHead
  extends Tagged.CompactionShadowsSystemHead<{
    /** The first node of the range. */
    readonly startSeq: SessionSeq;
    /** The last node of the range. */
    readonly endSeq: SessionSeq;
    /** The system head, node 0 of the surface. */
    readonly head: SessionSeq;
  }> {
  /** A sentence for people. */
  override readonly message: string = `Compaction range ${
    quote(this.startSeq)
  }..${quote(this.endSeq)} starts at the system head ${
    quote(this.head)
  }; start the range after the head or use setSystemPrompt`;
}

/**
 * A compaction range that holds one side of a tool call and its result but
 * not the other, which would leave the model an unanswered call or an
 * answer to a call it never made.
 */
export class CompactionSplitsToolPair extends Tagged.CompactionSplitsToolPair<{
  /** The first node of the range. */
  readonly startSeq: SessionSeq;
  /** The last node of the range. */
  readonly endSeq: SessionSeq;
  /** The call id. */
  readonly callId: string;
  /** The `assistant/message` node that issued the call. */
  readonly callSeq: SessionSeq;
  /** The `tool/result` node that answers it. */
  readonly resultSeq: SessionSeq;
}> {
  /** A sentence for people. */
  override readonly message: string = `Compaction range ${
    quote(this.startSeq)
  }..${quote(this.endSeq)} splits tool call ${quote(this.callId)} (node ${
    quote(this.callSeq)
  }) from its result (node ${
    quote(this.resultSeq)
  }); widen or narrow the range to hold both or neither`;
}

/**
 * `setSystemPrompt` on a non-empty surface whose head is not a
 * `system/message`: an append would not land at the head, and a replacement
 * would shadow a message that is not a prompt.
 *
 * @deprecated No longer raised: `setSystemPrompt` now prepends the prompt
 * (`surfaceOp: "prepend"`) on such a surface.
 */
export class SystemPromptNotAtHead extends Tagged.SystemPromptNotAtHead<{
  /** The current head node. */
  readonly head: SessionSeq;
  /** Its event type. */
  readonly headType: string;
}> {
  /** A sentence for people. */
  override readonly message: string = `The surface head ${
    quote(this.head)
  } is ${
    quote(this.headType)
  }, not a system/message; set the system prompt before the first message`;
}

/** A fork point outside the session's log. */
export class ForkPointOutOfRange extends Tagged.ForkPointOutOfRange<{
  /** The requested cut. */
  readonly atSeq: SessionSeq;
  /** The first seq of the log (its window base). */
  readonly baseSeq: SessionSeq;
  /** The seq the next event would get; the cut must be below it. */
  readonly nextSeq: SessionSeq;
}> {
  /** A sentence for people. */
  override readonly message: string = `Fork point ${
    quote(this.atSeq)
  } is outside the log; pick a seq from ${quote(this.baseSeq)} to below ${
    quote(this.nextSeq)
  }`;
}

/**
 * A rewind that would drop other turns than its caller declared: a turn
 * numbered at least `expectedFrom` kept, or one below it dropped.
 */
export class RewindDropsUnexpectedTurns
  extends Tagged.RewindDropsUnexpectedTurns<{
    /** The point of the rewind. */
    readonly toSeq: SessionSeq;
    /** The first turn the caller expected it to drop. */
    readonly expectedFrom: number;
    /** The last turn the point keeps, if any. */
    readonly keptThrough: number | undefined;
    /** The first turn it would drop, if any. */
    readonly droppedFrom: number | undefined;
  }> {
  /** A sentence for people. */
  override readonly message: string = `The rewind to seq ${
    quote(this.toSeq)
  } was expected to drop the turns from ${
    quote(this.expectedFrom)
  } on, and no other, but it keeps turns through ${
    quote(this.keptThrough)
  } and drops turns from ${quote(this.droppedFrom)}`;
}

/**
 * A compaction asked for by an id or a seq that names no compaction or prune
 * of the log.
 */
export class CompactionNotFound extends Tagged.CompactionNotFound<{
  /** What was asked for: a compaction id, or a seq as a string. */
  readonly given: string;
  /** The ids of the log's compactions, in log order (prunes have none). */
  readonly compactionIds: ReadonlyArray<string>;
  /** The seq of each compaction and prune of the log, in log order. */
  readonly seqs: ReadonlyArray<SessionSeq>;
}> {
  /** A sentence for people. */
  override readonly message: string = this.seqs.length === 0
    ? `No compaction ${quote(this.given)} in the log: it has no compactions`
    : `No compaction ${quote(this.given)} in the log; choose a compaction id (${
      this.compactionIds.length === 0
        ? "none"
        : this.compactionIds.map((id) => quote(id)).join(", ")
    }) or the seq of a compaction or prune (${this.seqs.join(", ")})`;
}
