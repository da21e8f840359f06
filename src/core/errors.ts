/**
 * The tagged errors of decoding and folding: one class per rule.
 *
 * Every rule of the format has its own error, named after what went wrong
 * and carrying the offending seqs and values as fields, so a caller can
 * narrow with `Effect.catchTag`. Messages are for people and are not part of
 * the contract. This module owns the errors, not the checks.
 *
 * @module
 */
import type { SessionSeq } from "./seq.ts";
import { quote } from "./quote.ts";
import { type TaggedErrorBases, taggedErrorBases } from "./tagged_error.ts";

// The tags, each once; every class below extends the base of its tag.
const Tagged: TaggedErrorBases<
  | "InvalidEnvelope"
  | "InvalidSessionSeq"
  | "EventsNotHeld"
  | "UnknownEventType"
  | "InvalidEventData"
  | "SurfaceOpMissing"
  | "InvalidSurfaceOp"
  | "PrependNotSystemMessage"
  | "RewindNotUserMessage"
  | "RewindPointNotEarlier"
  | "SurfaceMetadataOnLogOnlyEvent"
  | "SourcesOnAssistantMessage"
  | "InvalidSourceList"
  | "EmptySourceList"
  | "DuplicateSource"
  | "SourceNotEarlier"
  | "ReplaceEndpointNotEarlier"
  | "ToolErrorWithoutIsError"
  | "RetiredHeaderSystem"
  | "NonContiguousSeq"
  | "ReplaceStartNotOnSurface"
  | "ReplaceEndNotOnSurface"
  | "ReplaceRangeInverted"
  | "ShadowedNodeNotCited"
  | "ToolResultReplaceNotSingle"
  | "ToolResultReplaceTargetNotToolResult"
  | "ToolResultReplaceChangesMoreThanContent"
  | "SystemHeadProtected"
  | "SystemHeadExists"
  | "ReplaceShadowsUnansweredCall"
  | "RewindNotHeld"
  | "RewindPointInsideWork"
  | "RewindDropsSystemHead"
  | "RewindBreaksToolPair"
  | "RewindSourcesMismatch"
> = taggedErrorBases();

const at = (seq: number | undefined): string =>
  seq === undefined ? "" : ` at seq ${quote(seq)}`;

// ---------------------------------------------------------------------------
// Event-local rules

/** Why an envelope is invalid. */
export type EnvelopeProblem =
  | "not-an-object"
  | "unknown-key"
  | "invalid-type"
  | "invalid-time"
  | "missing-data"
  | "invalid-ignorable";

/** The value is not an event envelope. */
export class InvalidEnvelope extends Tagged.InvalidEnvelope<{
  /** The seq, when the value had a readable one. */
  readonly seq: number | undefined;
  /** What is wrong. */
  readonly problem: EnvelopeProblem;
  /** The offending key, for `unknown-key`. */
  readonly key: string | undefined;
  /** The offending value. */
  readonly value: unknown;
}> {
  /** A sentence for people. */
  override readonly message: string = {
    "not-an-object": `Expected an event to be a JSON object but found ${
      quote(this.value)
    }`,
    "unknown-key": `Expected only the envelope keys but found ${
      quote(this.key)
    }${at(this.seq)}; move it into data`,
    "invalid-type": `Expected type to be a non-empty string but found ${
      quote(this.value)
    }${at(this.seq)}`,
    "invalid-time":
      `Expected time to be a safe integer of epoch milliseconds but found ${
        quote(this.value)
      }${at(this.seq)}`,
    "missing-data": `Expected the event${at(this.seq)} to have data`,
    "invalid-ignorable": `Expected ignorable to be absent or true but found ${
      quote(this.value)
    }${at(this.seq)}`,
  }[this.problem];
}

/** `seq` is not a non-negative safe integer (or is `-0`). */
export class InvalidSessionSeq extends Tagged.InvalidSessionSeq<{
  /** The offending value. */
  readonly value: unknown;
  /** The event type, when readable. */
  readonly type: string | undefined;
}> {
  /** A sentence for people. */
  override readonly message: string =
    `Expected seq to be a non-negative safe integer but found ${
      quote(this.value)
    }`;
}

/**
 * The session does not hold the events asked for: it was opened from a
 * checkpoint, or from a long log, and holds its surface and the events from
 * `heldFrom` on.
 * Older events are read through the store (`store.events`; `store.withHistory`
 * runs a history function such as `lineage` reading what it needs), or the
 * session is opened whole (`wholeLog: true`).
 */
export class EventsNotHeld extends Tagged.EventsNotHeld<{
  /** The first seq asked for. */
  readonly fromSeq: SessionSeq;
  /** The first seq the session holds. */
  readonly heldFrom: SessionSeq;
}> {
  /** A sentence for people. */
  override readonly message: string =
    `The session holds its events from seq ${this.heldFrom} on (it holds its surface and its latest events), not seq ${this.fromSeq}: read older events with store.events, run history functions with store.withHistory, or open it with wholeLog: true`;
}

/** The type is outside the vocabulary and the event is not ignorable. */
export class UnknownEventType extends Tagged.UnknownEventType<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The unknown type. */
  readonly type: string;
}> {
  /** A sentence for people. */
  override readonly message: string = `Unknown event type ${quote(this.type)}${
    at(this.seq)
  }; pass its data schema in the vocabulary or mark it ignorable: true`;
}

/** `data` does not match the type's schema. */
export class InvalidEventData extends Tagged.InvalidEventData<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The event type. */
  readonly type: string;
  /** Where in `data` the first issue is. */
  readonly path: ReadonlyArray<string | number>;
  /** The issue, readable. */
  readonly issue: string;
}> {
  /** A sentence for people. */
  override readonly message: string = `Invalid data for ${quote(this.type)}${
    at(this.seq)
  } at ${quote(["data", ...this.path.map(String)].join("."))}: ${this.issue}`;
}

/** A surface type without `surfaceOp`. */
export class SurfaceOpMissing extends Tagged.SurfaceOpMissing<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The event type. */
  readonly type: string;
}> {
  /** A sentence for people. */
  override readonly message: string = `Expected ${quote(this.type)}${
    at(this.seq)
  } to carry surfaceOp; surface events are never implicit appends`;
}

/**
 * `surfaceOp` is neither `"append"`, `"prepend"`, an exact replace object
 * nor an exact rewind object.
 */
export class InvalidSurfaceOp extends Tagged.InvalidSurfaceOp<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The event type. */
  readonly type: string;
  /** The offending value. */
  readonly surfaceOp: unknown;
}> {
  /** A sentence for people. */
  override readonly message: string =
    `Expected surfaceOp to be "append", "prepend", {"op":"replace","startSeq","endSeq"} or {"op":"rewind","toSeq"} but found ${
      quote(this.surfaceOp)
    }${at(this.seq)}`;
}

/** `surfaceOp: "prepend"` on an event that is not a `system/message`. */
export class PrependNotSystemMessage extends Tagged.PrependNotSystemMessage<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The event type. */
  readonly type: string;
}> {
  /** A sentence for people. */
  override readonly message: string =
    `Expected only a system/message to prepend but found ${quote(this.type)}${
      at(this.seq)
    }; append it or replace a range instead`;
}

/** A rewind carried by an event that is not a `user/message`. */
export class RewindNotUserMessage extends Tagged.RewindNotUserMessage<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The event type. */
  readonly type: string;
}> {
  /** A sentence for people. */
  override readonly message: string =
    `Expected only a user/message to carry a rewind but found ${
      quote(this.type)
    }${at(this.seq)}; rewind with the user message the session goes on from`;
}

/** A rewind's point is not earlier than the event that carries it. */
export class RewindPointNotEarlier extends Tagged.RewindPointNotEarlier<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The point the rewind names. */
  readonly toSeq: SessionSeq;
}> {
  /** A sentence for people. */
  override readonly message: string = `Rewind toSeq ${
    quote(this.toSeq)
  } is not earlier than the event${at(this.seq)}`;
}

/** A known log-only type carries `surfaceOp` or `sourceEventSeqs`. */
export class SurfaceMetadataOnLogOnlyEvent
  extends Tagged.SurfaceMetadataOnLogOnlyEvent<{
    /** The event seq. */
    readonly seq: SessionSeq;
    /** The event type. */
    readonly type: string;
    /** The field that must not be there. */
    readonly field: "surfaceOp" | "sourceEventSeqs";
  }> {
  /** A sentence for people. */
  override readonly message: string = `Log-only event ${quote(this.type)}${
    at(this.seq)
  } must not carry ${quote(this.field)}`;
}

/** An `assistant/message` carries `sourceEventSeqs`. */
export class SourcesOnAssistantMessage
  extends Tagged.SourcesOnAssistantMessage<{
    /** The event seq. */
    readonly seq: SessionSeq;
  }> {
  /** A sentence for people. */
  override readonly message: string = `The assistant message${
    at(this.seq)
  } must not carry sourceEventSeqs; it embeds its stream`;
}

/** `sourceEventSeqs` is not an array of seqs. */
export class InvalidSourceList extends Tagged.InvalidSourceList<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The event type. */
  readonly type: string;
  /** The index of the bad element, or undefined when not an array. */
  readonly index: number | undefined;
  /** The offending value. */
  readonly value: unknown;
}> {
  /** A sentence for people. */
  override readonly message: string = this.index === undefined
    ? `Expected sourceEventSeqs to be an array of seqs but found ${
      quote(this.value)
    }${at(this.seq)}`
    : `Expected sourceEventSeqs[${this.index}] to be a seq but found ${
      quote(this.value)
    }${at(this.seq)}`;
}

/** `sourceEventSeqs` is `[]`. */
export class EmptySourceList extends Tagged.EmptySourceList<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The event type. */
  readonly type: string;
}> {
  /** A sentence for people. */
  override readonly message: string = `Expected sourceEventSeqs${
    at(this.seq)
  } to be non-empty; omit the key when there are no sources`;
}

/** A source is listed twice. */
export class DuplicateSource extends Tagged.DuplicateSource<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The event type. */
  readonly type: string;
  /** The repeated source. */
  readonly source: SessionSeq;
}> {
  /** A sentence for people. */
  override readonly message: string = `Source ${
    quote(this.source)
  } is listed twice${at(this.seq)}`;
}

/** A source is not earlier than the event. */
export class SourceNotEarlier extends Tagged.SourceNotEarlier<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The event type. */
  readonly type: string;
  /** The offending source. */
  readonly source: SessionSeq;
}> {
  /** A sentence for people. */
  override readonly message: string = `Source ${
    quote(this.source)
  } is not earlier than the event${at(this.seq)}`;
}

/** A replace endpoint is not earlier than the event. */
export class ReplaceEndpointNotEarlier
  extends Tagged.ReplaceEndpointNotEarlier<{
    /** The event seq. */
    readonly seq: SessionSeq;
    /** The event type. */
    readonly type: string;
    /** Which endpoint. */
    readonly endpoint: "startSeq" | "endSeq";
    /** Its value. */
    readonly value: SessionSeq;
  }> {
  /** A sentence for people. */
  override readonly message: string = `Replace ${this.endpoint} ${
    quote(this.value)
  } is not earlier than the event${at(this.seq)}`;
}

/** A `tool/result` has `error` while its block is not `isError: true`. */
export class ToolErrorWithoutIsError extends Tagged.ToolErrorWithoutIsError<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The tool call id. */
  readonly callId: string;
}> {
  /** A sentence for people. */
  override readonly message: string = `Tool result for call ${
    quote(this.callId)
  }${at(this.seq)} has an error but its block is not isError: true`;
}

/** A v3 `request/header` carries `header.system`. */
export class RetiredHeaderSystem extends Tagged.RetiredHeaderSystem<{
  /** The event seq. */
  readonly seq: SessionSeq;
}> {
  /** A sentence for people. */
  override readonly message: string = `Request header${
    at(this.seq)
  } carries header.system, retired in v3; append a system/message instead`;
}

/** Every error of event-local decoding. */
export type EventDecodeError =
  | InvalidEnvelope
  | InvalidSessionSeq
  | UnknownEventType
  | InvalidEventData
  | SurfaceOpMissing
  | InvalidSurfaceOp
  | SurfaceMetadataOnLogOnlyEvent
  | SourcesOnAssistantMessage
  | InvalidSourceList
  | EmptySourceList
  | DuplicateSource
  | SourceNotEarlier
  | ReplaceEndpointNotEarlier
  | ToolErrorWithoutIsError
  | RetiredHeaderSystem
  | PrependNotSystemMessage
  | RewindNotUserMessage
  | RewindPointNotEarlier;

// ---------------------------------------------------------------------------
// Relational rules

/** The event's seq is not the surface's next expected seq. */
export class NonContiguousSeq extends Tagged.NonContiguousSeq<{
  /** The expected seq. */
  readonly expected: SessionSeq;
  /** The event's seq. */
  readonly actual: SessionSeq;
}> {
  /** A sentence for people. */
  override readonly message: string = `Expected seq ${
    quote(this.expected)
  } but found ${quote(this.actual)}; seqs are dense`;
}

/** `startSeq` is not a current surface node. */
export class ReplaceStartNotOnSurface extends Tagged.ReplaceStartNotOnSurface<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The start endpoint. */
  readonly startSeq: SessionSeq;
}> {
  /** A sentence for people. */
  override readonly message: string = `Replace startSeq ${
    quote(this.startSeq)
  }${at(this.seq)} is not on the surface`;
}

/** `endSeq` is not a current surface node. */
export class ReplaceEndNotOnSurface extends Tagged.ReplaceEndNotOnSurface<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The end endpoint. */
  readonly endSeq: SessionSeq;
}> {
  /** A sentence for people. */
  override readonly message: string = `Replace endSeq ${quote(this.endSeq)}${
    at(this.seq)
  } is not on the surface`;
}

/** `startSeq` stands after `endSeq` in surface order. */
export class ReplaceRangeInverted extends Tagged.ReplaceRangeInverted<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The start endpoint. */
  readonly startSeq: SessionSeq;
  /** The end endpoint. */
  readonly endSeq: SessionSeq;
}> {
  /** A sentence for people. */
  override readonly message: string = `Replace startSeq ${
    quote(this.startSeq)
  } stands after endSeq ${quote(this.endSeq)} on the surface${at(this.seq)}`;
}

/** A node in the replaced range is missing from `sourceEventSeqs`. */
export class ShadowedNodeNotCited extends Tagged.ShadowedNodeNotCited<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The shadowed nodes the event does not cite. */
  readonly missing: ReadonlyArray<SessionSeq>;
}> {
  /** A sentence for people. */
  override readonly message: string = `The replacement${
    at(this.seq)
  } must cite every node it shadows; missing ${
    quote(this.missing)
  } in sourceEventSeqs`;
}

/** A `tool/result` replacement whose range is not exactly one node. */
export class ToolResultReplaceNotSingle
  extends Tagged.ToolResultReplaceNotSingle<{
    /** The event seq. */
    readonly seq: SessionSeq;
    /** How many nodes the range holds. */
    readonly rangeLength: number;
  }> {
  /** A sentence for people. */
  override readonly message: string = `A tool/result replacement${
    at(this.seq)
  } must replace exactly one node but its range holds ${
    quote(this.rangeLength)
  }`;
}

/** A `tool/result` replacement whose shadowed node is not a `tool/result`. */
export class ToolResultReplaceTargetNotToolResult
  extends Tagged.ToolResultReplaceTargetNotToolResult<{
    /** The event seq. */
    readonly seq: SessionSeq;
    /** The shadowed node. */
    readonly target: SessionSeq;
    /** Its type. */
    readonly targetType: string;
  }> {
  /** A sentence for people. */
  override readonly message: string = `A tool/result replacement${
    at(this.seq)
  } must shadow a tool/result but node ${quote(this.target)} is ${
    quote(this.targetType)
  }`;
}

/** A `tool/result` replacement that changes more than the block's content. */
export class ToolResultReplaceChangesMoreThanContent
  extends Tagged.ToolResultReplaceChangesMoreThanContent<{
    /** The event seq. */
    readonly seq: SessionSeq;
    /** The shadowed node. */
    readonly target: SessionSeq;
    /** The first path in `data` that differs. */
    readonly path: ReadonlyArray<string | number>;
  }> {
  /** A sentence for people. */
  override readonly message: string = `A tool/result replacement${
    at(this.seq)
  } may change only the block's content but changes ${
    quote(["data", ...this.path.map(String)].join("."))
  } of node ${quote(this.target)}`;
}

/** A replacement that would take the protected system head off. */
export class SystemHeadProtected extends Tagged.SystemHeadProtected<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The head node. */
  readonly head: SessionSeq;
}> {
  /** A sentence for people. */
  override readonly message: string = `The replacement${
    at(this.seq)
  } would shadow the system head ${
    quote(this.head)
  }; only a system/message replacing exactly the head may`;
}

/** A `system/message` prepended while the head is already a system prompt. */
export class SystemHeadExists extends Tagged.SystemHeadExists<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The head node, a `system/message`. */
  readonly head: SessionSeq;
}> {
  /** A sentence for people. */
  override readonly message: string = `The prepend${
    at(this.seq)
  } would put a second system prompt before the system head ${
    quote(this.head)
  }; replace the head instead`;
}

/**
 * A replacement whose range holds an `assistant/message` with tool calls no
 * `tool/result` has answered yet: the result, when it came, would answer a
 * call the model no longer sees, and no request could carry it.
 */
export class ReplaceShadowsUnansweredCall
  extends Tagged.ReplaceShadowsUnansweredCall<{
    /** The event seq. */
    readonly seq: SessionSeq;
    /** The first `assistant/message` node in the range with unanswered calls. */
    readonly callSeq: SessionSeq;
    /** Its unanswered call ids, in block order. */
    readonly callIds: ReadonlyArray<string>;
  }> {
  /** A sentence for people. */
  override readonly message: string = `The replacement${
    at(this.seq)
  } would shadow node ${quote(this.callSeq)} whose tool call${
    this.callIds.length === 1 ? "" : "s"
  } ${
    this.callIds.map(quote).join(", ")
  } no tool/result answered yet; append the results first, or end the range before that node`;
}

/**
 * A rewind on a surface that does not hold the log it needs: one restored
 * from a checkpoint (it holds its nodes and the events from `heldFrom` on),
 * one that keeps only its nodes' events, or a window starting after the
 * point. The session's `rewind` reads the log through the store and folds
 * it whole first; an open from a checkpoint replays the whole log instead.
 */
export class RewindNotHeld extends Tagged.RewindNotHeld<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The point the rewind names. */
  readonly toSeq: SessionSeq;
  /** The first seq whose event the surface holds. */
  readonly heldFrom: SessionSeq;
}> {
  /** A sentence for people. */
  override readonly message: string = `The rewind${at(this.seq)} to seq ${
    quote(this.toSeq)
  } needs the whole log but the surface holds it from seq ${
    quote(this.heldFrom)
  } on; fold the whole log (open the session with wholeLog: true)`;
}

/** What a rewind point may not leave open. */
export type OpenWork = "turn" | "step" | "compaction";

/** A rewind to a point where a turn, a step or a compaction is open. */
export class RewindPointInsideWork extends Tagged.RewindPointInsideWork<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The point the rewind names. */
  readonly toSeq: SessionSeq;
  /** What is open there. */
  readonly work: OpenWork;
  /** The event that opened it (`turn/start`, `step/start`, `compaction/start`). */
  readonly openedAt: SessionSeq;
}> {
  /** A sentence for people. */
  override readonly message: string = `The rewind${at(this.seq)} to seq ${
    quote(this.toSeq)
  } lands inside the ${this.work} opened at seq ${
    quote(this.openedAt)
  }; rewind to a point before it starts or after it ends`;
}

/** A rewind whose restored surface has no system head where the surface had one. */
export class RewindDropsSystemHead extends Tagged.RewindDropsSystemHead<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The point the rewind names. */
  readonly toSeq: SessionSeq;
  /** The current system head. */
  readonly head: SessionSeq;
}> {
  /** A sentence for people. */
  override readonly message: string = `The rewind${at(this.seq)} to seq ${
    quote(this.toSeq)
  } would take the system head ${
    quote(this.head)
  } off and leave no system prompt; rewind to a point after the prompt was set`;
}

/**
 * A rewind whose restored surface holds a tool call without its result
 * after it, or a result without its call before it.
 */
export class RewindBreaksToolPair extends Tagged.RewindBreaksToolPair<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The point the rewind names. */
  readonly toSeq: SessionSeq;
  /** The unpaired node: an `assistant/message` or a `tool/result`. */
  readonly node: SessionSeq;
  /** The call id without its partner. */
  readonly callId: string;
}> {
  /** A sentence for people. */
  override readonly message: string = `The rewind${at(this.seq)} to seq ${
    quote(this.toSeq)
  } would leave tool call ${quote(this.callId)} of node ${
    quote(this.node)
  } unpaired on the surface; rewind to a point where its call and result are both on the surface, or neither`;
}

/** A rewind whose `sourceEventSeqs` are not exactly the nodes it takes off. */
export class RewindSourcesMismatch extends Tagged.RewindSourcesMismatch<{
  /** The event seq. */
  readonly seq: SessionSeq;
  /** The point the rewind names. */
  readonly toSeq: SessionSeq;
  /** Nodes it takes off but does not cite. */
  readonly missing: ReadonlyArray<SessionSeq>;
  /** Seqs it cites but does not take off. */
  readonly extra: ReadonlyArray<SessionSeq>;
}> {
  /** A sentence for people. */
  override readonly message: string = `The rewind${at(this.seq)} to seq ${
    quote(this.toSeq)
  } must cite exactly the nodes it takes off; missing ${
    quote(this.missing)
  }, extra ${quote(this.extra)} in sourceEventSeqs`;
}

/** Every error of the fold. */
export type SurfaceError =
  | NonContiguousSeq
  | ReplaceStartNotOnSurface
  | ReplaceEndNotOnSurface
  | ReplaceRangeInverted
  | ShadowedNodeNotCited
  | ToolResultReplaceNotSingle
  | ToolResultReplaceTargetNotToolResult
  | ToolResultReplaceChangesMoreThanContent
  | SystemHeadProtected
  | SystemHeadExists
  | ReplaceShadowsUnansweredCall
  | RewindNotHeld
  | RewindPointInsideWork
  | RewindDropsSystemHead
  | RewindBreaksToolPair
  | RewindSourcesMismatch;
