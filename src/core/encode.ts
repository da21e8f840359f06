/**
 * Encoding an event back to its JSON object, the inverse of decoding: the
 * canonical key order, extra types' data encoded by the caller's
 * vocabulary, and an opaque event returned exactly as it was read.
 *
 * @module
 */
import * as Schema from "effect/Schema";
import { eventTypeName, type SessionEvent } from "./event.ts";
import { isOpaqueEvent, type Vocabulary } from "./decode.ts";
import { isObject } from "./json.ts";

/** Options of {@link encodeEvent}. */
export interface EncodeOptions {
  /** The vocabulary whose schemas encode extra types' data. */
  readonly vocabulary?: Vocabulary;
}

/**
 * Encodes an event as a JSON object with the canonical key order (`type`,
 * `seq`, `time`, `data`, `ignorable`, `surfaceOp`, `sourceEventSeqs`).
 * Opaque events come back exactly as they were read.
 *
 * @param event A decoded event.
 * @param options The vocabulary whose schemas encode extra types' data.
 * @returns A JSON value; `JSON.stringify` of it is the event's line.
 *
 * @example Canonical key order
 * ```ts
 * import { decodeEvent } from "@palimpsest/session/schema";
 * import { encodeEvent } from "@palimpsest/session/schema";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const event = Effect.runSync(decodeEvent({ data: { turn: 1 }, time: 5, seq: 0, type: "turn/start" }));
 * assert.equal(JSON.stringify(encodeEvent(event)), '{"type":"turn/start","seq":0,"time":5,"data":{"turn":1}}');
 * ```
 */
export function encodeEvent(
  event: SessionEvent,
  options?: EncodeOptions,
): unknown {
  if (isOpaqueEvent(event)) return event;
  const extra = options?.vocabulary?.types.get(eventTypeName(event));
  const data = extra === undefined
    ? event.data
    : Schema.encodeUnknownSync(extra)(event.data);
  const out: Record<string, unknown> = {
    type: event.type,
    seq: event.seq,
    time: event.time,
    data,
  };
  if (event.ignorable === true) out.ignorable = true;
  if (event.surfaceOp !== undefined) {
    const op = event.surfaceOp;
    out.surfaceOp = !isObject(op)
      ? op
      : op.op === "rewind"
      ? { op: "rewind", toSeq: op.toSeq }
      : { op: "replace", startSeq: op.startSeq, endSeq: op.endSeq };
  }
  if (event.sourceEventSeqs !== undefined) {
    out.sourceEventSeqs = event.sourceEventSeqs;
  }
  return out;
}
