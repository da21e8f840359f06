/**
 * Edge v1 → v2: assistant output moves into the message.
 *
 * v1 logs model output as `assistant/chunk {turn, step, chunk}` events; an `assistant/message`
 * cites its chunks, in order, in `sourceEventSeqs`. This edge:
 *
 * - buffers the pending chunks (those since the last non-chunk event) and nothing else;
 * - on an `assistant/message`, embeds the chunks it cites as `data.stream` (`{time, chunk}`, the
 *   chunk event's time) and drops its `sourceEventSeqs`;
 * - turns pending chunks no message claims into one `assistant/attempt {turn, step, stream}` at
 *   the position of their last chunk: just before the next non-chunk event (or the end of the
 *   log), or before the message that claims the others. A change of `turn`/`step` between chunks
 *   closes the run too;
 * - renumbers the remaining events densely and rewrites every reference (`sourceEventSeqs`,
 *   replace `start`/`end`, `compaction/*` `shadowedSeqs`) through an old→new seq map.
 *
 * Refuses (besides the v1 decoder's refusals): `ConsumedChunkReference` for any reference to a
 * chunk other than its own message's citation (a chunk exists in v2 only inside a message or an
 * attempt); `InvalidChunkCitation` for a message citing a non-chunk or chunks out of order.
 * Decision: a chunk is claimable only while pending, i.e. by the `assistant/message` that directly
 * follows its run; a message citing an older chunk refers to a consumed chunk.
 *
 * @module
 */
import * as Result from "effect/Result";
import {
  decodeDense,
  type EdgeOutput,
  type EdgeResult,
  type MigrationEdge,
  remapList,
  remapOne,
  remapShadowed,
} from "./edge.ts";
import {
  ConsumedChunkReference,
  InvalidChunkCitation,
  InvalidLegacyEventData,
} from "./errors.ts";
import { isJsonObject, isSeq, type Json, type JsonObject } from "./json.ts";
import { isOpaque, type LegacyEvent } from "./legacy.ts";
import { getSeq, makeSeqMap, pushSeq, setSeq } from "./seq_map.ts";
import { decodeV1Event, v1Vocabulary } from "./v1.ts";

/** Marks an old seq that was a chunk now folded into a message or an attempt. */
const CONSUMED = -1;
/** Marks an old seq that is a chunk still pending. */
const PENDING = -2;

interface PendingChunk {
  readonly seq: number;
  readonly line: number;
  readonly time: number;
  readonly turn: number;
  readonly step: number;
  readonly chunk: Json;
}

const isShadowing = (type: string): boolean =>
  type === "compaction/summary" || type === "compaction/prune";

/**
 * The v1 → v2 edge.
 *
 * @example Folding two chunks into their message
 * ```ts
 * import { v1ToV2 } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const run = v1ToV2.start({ type: "session", version: 1, id: "s", createdAt: 0, isSeeded: false });
 * run.push({ type: "assistant/chunk", seq: 0, time: 5, data: { turn: 0, step: 0, chunk: "a" } }, 2);
 * run.push({ type: "assistant/chunk", seq: 1, time: 6, data: { turn: 0, step: 0, chunk: "b" } }, 3);
 * const out = run.push({
 *   type: "assistant/message", seq: 2, time: 7, surfaceOp: "append", sourceEventSeqs: [0, 1],
 *   data: { turn: 0, step: 0, message: { id: "a1", role: "assistant", content: [], source: { kind: "model", provider: "p", model: "m" } } },
 * }, 4);
 * const event = Result.isSuccess(out) ? out.success[0]?.event : undefined;
 * assert.equal(event?.["seq"], 0);
 * assert.deepEqual(event?.["data"], {
 *   turn: 0, step: 0,
 *   message: { id: "a1", role: "assistant", content: [], source: { kind: "model", provider: "p", model: "m" } },
 *   stream: [{ time: 5, chunk: "a" }, { time: 6, chunk: "b" }],
 * });
 * ```
 */
export const v1ToV2: MigrationEdge = {
  from: 1,
  to: 2,
  start: () => {
    const map = makeSeqMap();
    let next = 0;
    let pending: Array<PendingChunk> = [];

    const attempt = (
      chunks: ReadonlyArray<PendingChunk>,
    ): EdgeOutput | undefined => {
      const last = chunks[chunks.length - 1];
      if (last === undefined) return undefined;
      const seq = next;
      next += 1;
      return {
        line: last.line,
        event: {
          type: "assistant/attempt",
          seq,
          time: last.time,
          data: {
            turn: last.turn,
            step: last.step,
            stream: chunks.map((c) => ({ time: c.time, chunk: c.chunk })),
          },
        },
      };
    };

    const flush = (out: Array<EdgeOutput>): void => {
      const a = attempt(pending);
      for (const c of pending) setSeq(map, c.seq, CONSUMED);
      pending = [];
      if (a !== undefined) out.push(a);
    };

    const consumed = (
      event: LegacyEvent,
      line: number,
      via: "sourceEventSeqs" | "surfaceOp" | "shadowedSeqs",
    ) =>
    (chunkSeq: number) =>
      new ConsumedChunkReference({ line, seq: event.seq, chunkSeq, via });

    const chunkOf = (
      event: LegacyEvent,
      line: number,
    ): PendingChunk | undefined => {
      const data = event.data;
      if (!isJsonObject(data)) return undefined;
      const turn = data["turn"];
      const step = data["step"];
      const chunk = data["chunk"];
      if (!isSeq(turn) || !isSeq(step) || chunk === undefined) return undefined;
      return { seq: event.seq, line, time: event.time, turn, step, chunk };
    };

    const message = (
      event: LegacyEvent,
      line: number,
      data: JsonObject,
    ): EdgeResult => {
      const out: Array<EdgeOutput> = [];
      const cited = event.sourceEventSeqs ?? [];
      const claimed = new Set<number>();
      let previous = -1;
      for (const source of cited) {
        const mark = getSeq(map, source);
        if (mark === CONSUMED) {
          return Result.fail(consumed(event, line, "sourceEventSeqs")(source));
        }
        if (mark !== PENDING) {
          return Result.fail(
            new InvalidChunkCitation({
              line,
              seq: event.seq,
              source,
              reason: "not-a-chunk",
            }),
          );
        }
        if (source < previous) {
          return Result.fail(
            new InvalidChunkCitation({
              line,
              seq: event.seq,
              source,
              reason: "out-of-order",
            }),
          );
        }
        previous = source;
        claimed.add(source);
      }
      const stream: Array<Json> = [];
      const unclaimed: Array<PendingChunk> = [];
      for (const c of pending) {
        if (claimed.has(c.seq)) stream.push({ time: c.time, chunk: c.chunk });
        else unclaimed.push(c);
      }
      const a = attempt(unclaimed);
      if (a !== undefined) out.push(a);
      for (const c of pending) setSeq(map, c.seq, CONSUMED);
      pending = [];
      const seq = next;
      next += 1;
      pushSeq(map, seq);
      const body: Record<string, Json> = {
        type: event.type,
        seq,
        time: event.time,
        data: { ...data, stream },
      };
      if (event.ignorable === true) body["ignorable"] = true;
      if (event.surfaceOp !== undefined) {
        const op = remapOp(event, line);
        if (Result.isFailure(op)) return Result.fail(op.failure);
        body["surfaceOp"] = op.success;
      }
      out.push({ line, event: body });
      return Result.succeed(out);
    };

    const remapOp = (
      event: LegacyEvent,
      line: number,
    ): Result.Result<Json, ConsumedChunkReference> => {
      const op = event.surfaceOp;
      if (op === undefined || op === "append") return Result.succeed("append");
      const start = remapOne(op.start, map);
      if (Result.isFailure(start)) {
        return Result.fail(consumed(event, line, "surfaceOp")(start.failure));
      }
      const end = remapOne(op.end, map);
      if (Result.isFailure(end)) {
        return Result.fail(consumed(event, line, "surfaceOp")(end.failure));
      }
      return Result.succeed({
        op: "replace",
        start: start.success,
        end: end.success,
      });
    };

    const other = (
      event: LegacyEvent,
      line: number,
      out: Array<EdgeOutput>,
    ): EdgeResult => {
      const seq = next;
      const body: Record<string, Json> = {
        type: event.type,
        seq,
        time: event.time,
        data: event.data,
      };
      if (isShadowing(event.type) && !isOpaque(v1Vocabulary, event)) {
        const data = remapShadowed(
          event,
          map,
          line,
          1,
          consumed(event, line, "shadowedSeqs"),
        );
        if (Result.isFailure(data)) return Result.fail(data.failure);
        body["data"] = data.success;
      }
      if (event.ignorable === true) body["ignorable"] = true;
      if (event.surfaceOp !== undefined) {
        const op = remapOp(event, line);
        if (Result.isFailure(op)) return Result.fail(op.failure);
        body["surfaceOp"] = op.success;
      }
      if (event.sourceEventSeqs !== undefined) {
        const sources = remapList(event.sourceEventSeqs, map);
        if (Result.isFailure(sources)) {
          return Result.fail(
            consumed(event, line, "sourceEventSeqs")(sources.failure),
          );
        }
        body["sourceEventSeqs"] = sources.success;
      }
      next += 1;
      pushSeq(map, seq);
      out.push({ line, event: body });
      return Result.succeed(out);
    };

    return {
      push: (input: unknown, line: number): EdgeResult => {
        const decoded = decodeDense(decodeV1Event, 1, input, line, map.size);
        if (Result.isFailure(decoded)) return Result.fail(decoded.failure);
        const event = decoded.success;
        if (event.type === "assistant/chunk") {
          const chunk = chunkOf(event, line);
          if (chunk === undefined) {
            return Result.fail(
              new InvalidLegacyEventData({
                line,
                seq: event.seq,
                version: 1,
                type: event.type,
                path: "",
                issue: "expected a chunk",
              }),
            );
          }
          const out: Array<EdgeOutput> = [];
          const head = pending[0];
          if (
            head !== undefined &&
            (head.turn !== chunk.turn || head.step !== chunk.step)
          ) {
            flush(out);
          }
          pending.push(chunk);
          pushSeq(map, PENDING);
          return Result.succeed(out);
        }
        if (event.type === "assistant/message" && isJsonObject(event.data)) {
          return message(event, line, event.data);
        }
        const out: Array<EdgeOutput> = [];
        flush(out);
        return other(event, line, out);
      },
      end: (): EdgeResult => {
        const out: Array<EdgeOutput> = [];
        flush(out);
        return Result.succeed(out);
      },
    };
  },
};
