/**
 * The append path of a draft: judging (or copying) its data as JSON,
 * assembling the event it becomes, decoding and folding it.
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import { decodeDraftResult } from "../core/decode.ts";
import { InvalidEventData } from "../core/errors.ts";
import { copyJsonValue, type JsonIssue, judgeJsonValue } from "../core/json.ts";
import type { SessionSeq } from "../core/seq.ts";
import type { AppendError, EventDraft, Session } from "./session.ts";
import { applyEventResult, type Surface } from "../surface/mod.ts";

// The event a draft becomes: envelope keys only, in the canonical order,
// holding the data as judged (or its copy) and the log's own copies of
// `surfaceOp` and `sourceEventSeqs` (decodeDraftResult keeps it as the
// event).
// Each common envelope is one literal of its final shape: the log keeps
// every event, and an object built whole is cheaper to make and to keep
// than one grown key by key.
const draftInput = (
  draft: EventDraft,
  data: unknown,
  seq: SessionSeq,
  time: number,
): Record<string, unknown> => {
  const type = draft.type;
  const ignorable = draft.ignorable;
  const op: unknown = draft.surfaceOp;
  const sources: unknown = draft.sourceEventSeqs;
  if (ignorable === undefined) {
    if (op === undefined) {
      if (sources === undefined) return { type, seq, time, data };
    } else {
      // A replace's op, like the sources, is the log's own copy.
      const surfaceOp = typeof op === "string"
        ? op
        : typeof op === "object" && op !== null
        ? { ...op }
        : undefined;
      if (surfaceOp !== undefined) {
        if (sources === undefined) {
          return { type, seq, time, data, surfaceOp };
        }
        if (Array.isArray(sources)) {
          return {
            type,
            seq,
            time,
            data,
            surfaceOp,
            sourceEventSeqs: [...sources],
          };
        }
      }
    }
  }
  const input: Record<string, unknown> = { type, seq, time, data };
  if (ignorable !== undefined) input.ignorable = ignorable;
  if (op !== undefined) {
    input.surfaceOp = typeof op === "object" && op !== null ? { ...op } : op;
  }
  if (sources !== undefined) {
    input.sourceEventSeqs = Array.isArray(sources) ? [...sources] : sources;
  }
  return input;
};

/**
 * Appends one draft to `surface` at `time` for `session` (its vocabulary,
 * and whether it copies drafts); the event's seq is the surface's next.
 * @internal
 */
export const appendDraft = (
  session: Session,
  surface: Surface,
  draft: EventDraft,
  time: number,
): Result.Result<Surface, AppendError> => {
  // The data is judged as JSON, so that what the log holds is what a reader
  // of the file gets back; a session that copies drafts keeps its own copy,
  // whatever the caller does to the draft afterwards. The envelope and the
  // schema are judged first, in the rule table's order, on the copy when
  // there is one.
  let data = draft.data;
  let notJson: JsonIssue | undefined;
  if (data !== undefined) {
    if (session.copiesDrafts === true) {
      const copy = copyJsonValue(data);
      if (copy.ok) data = copy.value;
      else notJson = copy;
    } else {
      notJson = judgeJsonValue(data);
    }
  }
  const seq = surface.nextSeq;
  const input = draftInput(draft, data, seq, time);
  const options = session.vocabulary === undefined
    ? undefined
    : { vocabulary: session.vocabulary };
  const decoded = decodeDraftResult(input, options);
  if (decoded._tag === "Failure") return Result.fail(decoded.failure);
  if (notJson !== undefined) {
    return Result.fail(
      new InvalidEventData({
        seq,
        type: draft.type,
        path: notJson.path,
        issue: notJson.issue,
      }),
    );
  }
  return applyEventResult(surface, decoded.success);
};
