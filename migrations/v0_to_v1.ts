/**
 * Edge v0 → v1: legacy spellings.
 *
 * `steering/message` becomes `user/message` (same data: the message itself), and
 * `compact/start|summary|prune|end` become `compaction/start|summary|prune|end`. Nothing is
 * renumbered, so no reference changes. Refuses what the v0 decoder refuses and seqs that are not
 * dense from 0.
 *
 * @module
 */
import * as Result from "effect/Result";
import { decodeDense, type EdgeResult, type MigrationEdge } from "./edge.ts";
import type { Json } from "./json.ts";
import { decodeV0Event } from "./v0.ts";

const renames: ReadonlyMap<string, string> = new Map([
  ["steering/message", "user/message"],
  ["compact/start", "compaction/start"],
  ["compact/summary", "compaction/summary"],
  ["compact/prune", "compaction/prune"],
  ["compact/end", "compaction/end"],
]);

/**
 * The v0 → v1 edge.
 *
 * @example Renaming a steering message
 * ```ts
 * import { v0ToV1 } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const run = v0ToV1.start({ type: "session", version: 0, id: "s", createdAt: 0, isSeeded: false });
 * const out = run.push({
 *   type: "steering/message", seq: 0, time: 1, surfaceOp: "append",
 *   data: { id: "u", role: "user", content: [], source: { kind: "user" } },
 * }, 2);
 * assert.equal(Result.isSuccess(out) && out.success[0]?.event["type"], "user/message");
 * ```
 */
export const v0ToV1: MigrationEdge = {
  from: 0,
  to: 1,
  start: () => {
    let expected = 0;
    return {
      push: (input: unknown, line: number): EdgeResult => {
        const decoded = decodeDense(decodeV0Event, 0, input, line, expected);
        if (Result.isFailure(decoded)) return Result.fail(decoded.failure);
        const event = decoded.success;
        expected += 1;
        const out: Record<string, Json> = {
          type: renames.get(event.type) ?? event.type,
          seq: event.seq,
          time: event.time,
          data: event.data,
        };
        if (event.ignorable === true) out["ignorable"] = true;
        if (event.surfaceOp !== undefined) out["surfaceOp"] = event.surfaceOp;
        if (event.sourceEventSeqs !== undefined) {
          out["sourceEventSeqs"] = event.sourceEventSeqs;
        }
        return Result.succeed([{ line, event: out }]);
      },
      end: (): EdgeResult => Result.succeed([]),
    };
  },
};
