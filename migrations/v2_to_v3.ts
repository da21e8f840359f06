/**
 * Edge v2 → v3: the canonical envelope and the system head.
 *
 * v2 keeps the system prompt in `request/header.data.header.system` and has no `system/message`.
 * This edge:
 *
 * - inserts an empty-content `system/message` head (`surfaceOp: "append"`) right after the first
 *   `step/start`, with that step's `turn`/`step` and time;
 * - before each `request/header` whose prompt differs from the current one (the head starts with
 *   none; an absent `system` is no prompt, the same as `""`), inserts a `system/message` that
 *   replaces the head (`startSeq = endSeq = head`, `sourceEventSeqs: [head]`), with the open
 *   step's `turn`/`step` and the header's time; it becomes the head;
 * - deletes `header.system`, renames replace keys `start`/`end` to `startSeq`/`endSeq`, renumbers
 *   densely and rewrites every reference (`sourceEventSeqs`, replace endpoints, `compaction/*`
 *   `shadowedSeqs`) through an old→new seq map.
 *
 * A system message is `{ id, role: "system", content, source: { kind: "plugin", plugin:
 * "system-prompt" } }` with `content` `[]` for no prompt, else one `{ type: "text", text }` block.
 * Its id is `migrated-system-` and the first 16 hex digits of SHA-256 over the session id, a NUL
 * and the v2 seq of its anchor (the `step/start` or `request/header` it was inserted for), so
 * migrating twice gives the same bytes.
 *
 * Refuses (besides the v2 decoder's refusals): `SurfaceEventBeforeFirstStep` (the head could not
 * stand first and keep chronology), `PromptChangeOutsideStep` (a system message needs an open
 * step), `SyntheticIdCollision` (a message of the log uses a synthetic id, before or after it was
 * made; only ids with the synthetic prefix are remembered, so memory stays flat).
 *
 * @module
 */
import { createHash } from "node:crypto";
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
  InvalidLegacyEventData,
  type MigrationError,
  PromptChangeOutsideStep,
  SurfaceEventBeforeFirstStep,
  SyntheticIdCollision,
} from "./errors.ts";
import { isJsonObject, isSeq, type Json, type JsonObject } from "./json.ts";
import { isOpaque, type LegacyEvent } from "./legacy.ts";
import { makeSeqMap, pushSeq } from "./seq_map.ts";
import { decodeV2Event, v2Vocabulary } from "./v2.ts";

/**
 * The prefix of every synthetic system message id.
 *
 * @example Recognising a synthetic id
 * ```ts
 * import { syntheticIdPrefix, syntheticSystemId } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * assert.ok(syntheticSystemId("s", 0).startsWith(syntheticIdPrefix));
 * ```
 */
export const syntheticIdPrefix: string = "migrated-system-";

/**
 * The plugin name v2→v3 system messages carry in their source.
 *
 * @example Its value
 * ```ts
 * import { systemPromptPlugin } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * assert.equal(systemPromptPlugin, "system-prompt");
 * ```
 */
export const systemPromptPlugin: string = "system-prompt";

/**
 * The deterministic id of a synthetic system message.
 *
 * @param sessionId The session id from the header.
 * @param anchorSeq The v2 seq of the event the message is inserted for.
 * @returns `migrated-system-` and 16 hex digits.
 *
 * @example Ids are stable
 * ```ts
 * import { syntheticSystemId } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * assert.equal(syntheticSystemId("s", 3), syntheticSystemId("s", 3));
 * assert.notEqual(syntheticSystemId("s", 3), syntheticSystemId("s", 4));
 * ```
 */
export function syntheticSystemId(
  sessionId: string,
  anchorSeq: number,
): string {
  const hex = createHash("sha256").update(`${sessionId}\u0000${anchorSeq}`)
    .digest("hex");
  return `${syntheticIdPrefix}${hex.slice(0, 16)}`;
}

const surfaceTypes: ReadonlySet<string> = new Set([
  "user/message",
  "assistant/message",
  "tool/result",
]);

const messageIdOf = (event: LegacyEvent): string | undefined => {
  const data = event.data;
  if (!isJsonObject(data)) return undefined;
  const message = event.type === "user/message" ? data : data["message"];
  if (!isJsonObject(message)) return undefined;
  const id = message["id"];
  return typeof id === "string" ? id : undefined;
};

interface OpenStep {
  readonly turn: number;
  readonly step: number;
}

/**
 * The v2 → v3 edge.
 *
 * @example The head after the first step
 * ```ts
 * import { v2ToV3 } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const run = v2ToV3.start({ type: "session", version: 2, id: "s", createdAt: 0, isSeeded: false });
 * run.push({ type: "turn/start", seq: 0, time: 1, data: { turn: 0 } }, 2);
 * const out = run.push({ type: "step/start", seq: 1, time: 2, data: { turn: 0, step: 0 } }, 3);
 * const types = Result.isSuccess(out) ? out.success.map((o) => o.event["type"]) : [];
 * assert.deepEqual(types, ["step/start", "system/message"]);
 * ```
 */
export const v2ToV3: MigrationEdge = {
  from: 2,
  to: 3,
  start: (header) => {
    const map = makeSeqMap();
    let next = 0;
    let head: number | undefined;
    let prompt = "";
    let open: OpenStep | undefined;
    const synthetic = new Set<string>();
    const prefixed = new Set<string>();

    const systemMessage = (
      anchor: LegacyEvent,
      line: number,
      step: OpenStep,
      text: string,
    ): Result.Result<EdgeOutput, SyntheticIdCollision> => {
      const id = syntheticSystemId(header.id, anchor.seq);
      if (synthetic.has(id) || prefixed.has(id)) {
        return Result.fail(
          new SyntheticIdCollision({ line, seq: anchor.seq, id }),
        );
      }
      synthetic.add(id);
      const seq = next;
      next += 1;
      const event: Record<string, Json> = {
        type: "system/message",
        seq,
        time: anchor.time,
        data: {
          turn: step.turn,
          step: step.step,
          message: {
            id,
            role: "system",
            content: text === "" ? [] : [{ type: "text", text }],
            source: { kind: "plugin", plugin: systemPromptPlugin },
          },
        },
      };
      if (head === undefined) {
        event["surfaceOp"] = "append";
      } else {
        event["surfaceOp"] = { op: "replace", startSeq: head, endSeq: head };
        event["sourceEventSeqs"] = [head];
      }
      head = seq;
      return Result.succeed({ line, event });
    };

    const rewrite = (
      event: LegacyEvent,
      line: number,
    ): Result.Result<JsonObject, MigrationError> => {
      const seq = next;
      const body: Record<string, Json> = {
        type: event.type,
        seq,
        time: event.time,
        data: event.data,
      };
      const known = !isOpaque(v2Vocabulary, event);
      // Every v2 reference is to an earlier event, all of them mapped: remapping cannot fail.
      const unreachable = (where: string) => (old: number) =>
        new InvalidLegacyEventData({
          line,
          seq: event.seq,
          version: 2,
          type: event.type,
          path: where,
          issue: `expected "${old}" to be an earlier event`,
        });
      if (
        known &&
        (event.type === "compaction/summary" ||
          event.type === "compaction/prune")
      ) {
        const data = remapShadowed(
          event,
          map,
          line,
          2,
          unreachable("shadowedSeqs"),
        );
        if (Result.isFailure(data)) return Result.fail(data.failure);
        body["data"] = data.success;
      }
      if (
        known && event.type === "request/header" && isJsonObject(event.data)
      ) {
        const h = event.data["header"];
        if (isJsonObject(h)) {
          const { system: _system, ...rest } = h;
          body["data"] = { ...event.data, header: rest };
        }
      }
      if (event.ignorable === true) body["ignorable"] = true;
      const op = event.surfaceOp;
      if (op !== undefined) {
        if (op === "append") {
          body["surfaceOp"] = "append";
        } else {
          const start = remapOne(op.start, map);
          const end = remapOne(op.end, map);
          if (Result.isFailure(start)) {
            return Result.fail(unreachable("surfaceOp")(start.failure));
          }
          if (Result.isFailure(end)) {
            return Result.fail(unreachable("surfaceOp")(end.failure));
          }
          body["surfaceOp"] = {
            op: "replace",
            startSeq: start.success,
            endSeq: end.success,
          };
        }
      }
      if (event.sourceEventSeqs !== undefined) {
        const sources = remapList(event.sourceEventSeqs, map);
        if (Result.isFailure(sources)) {
          return Result.fail(unreachable("sourceEventSeqs")(sources.failure));
        }
        body["sourceEventSeqs"] = sources.success;
      }
      next += 1;
      pushSeq(map, seq);
      return Result.succeed(body);
    };

    return {
      push: (input: unknown, line: number): EdgeResult => {
        const decoded = decodeDense(decodeV2Event, 2, input, line, map.size);
        if (Result.isFailure(decoded)) return Result.fail(decoded.failure);
        const event = decoded.success;
        const known = !isOpaque(v2Vocabulary, event);
        const out: Array<EdgeOutput> = [];
        if (known && surfaceTypes.has(event.type)) {
          if (head === undefined) {
            return Result.fail(
              new SurfaceEventBeforeFirstStep({
                line,
                seq: event.seq,
                type: event.type,
              }),
            );
          }
          const id = messageIdOf(event);
          if (id !== undefined && id.startsWith(syntheticIdPrefix)) {
            if (synthetic.has(id)) {
              return Result.fail(
                new SyntheticIdCollision({ line, seq: event.seq, id }),
              );
            }
            prefixed.add(id);
          }
        }
        if (known && event.type === "request/header") {
          const h = isJsonObject(event.data) ? event.data["header"] : undefined;
          const system = isJsonObject(h) ? h["system"] : undefined;
          const text = typeof system === "string" ? system : "";
          if (text !== prompt) {
            if (open === undefined || head === undefined) {
              return Result.fail(
                new PromptChangeOutsideStep({ line, seq: event.seq }),
              );
            }
            const message = systemMessage(event, line, open, text);
            if (Result.isFailure(message)) return Result.fail(message.failure);
            out.push(message.success);
            prompt = text;
          }
        }
        const body = rewrite(event, line);
        if (Result.isFailure(body)) return Result.fail(body.failure);
        out.push({ line, event: body.success });
        if (known && (event.type === "step/start")) {
          const data = event.data;
          const turn = isJsonObject(data) ? data["turn"] : undefined;
          const step = isJsonObject(data) ? data["step"] : undefined;
          if (isSeq(turn) && isSeq(step)) {
            open = { turn, step };
            if (head === undefined) {
              const message = systemMessage(event, line, open, "");
              if (Result.isFailure(message)) {
                return Result.fail(message.failure);
              }
              out.push(message.success);
            }
          }
        } else if (
          known && (event.type === "step/end" || event.type === "turn/end")
        ) {
          open = undefined;
        }
        return Result.succeed(out);
      },
      end: (): EdgeResult => Result.succeed([]),
    };
  },
};
