/**
 * The projection of one surface event to the message it derives, shared by
 * the fold (which records it per node) and by callers that need it for a
 * single event.
 *
 * @module
 */
import type { Message } from "../core/message.ts";
import type { SurfaceEvent } from "../core/event.ts";

/**
 * The message one surface event derives on its own: a `user/message` its
 * data, the others their `data.message`; undefined for a `system/message` or
 * `assistant/message` with empty content. `deriveMessages` is this,
 * node by node, along a surface.
 *
 * @param event A surface event.
 * @returns Its message, or undefined when it derives none.
 *
 * @example The message of a user message
 * ```ts
 * import { isSurfaceEvent } from "@palimpsest/session";
 * import { decodeEvent } from "@palimpsest/session/schema";
 * import { projectEvent } from "@palimpsest/session/internal";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const event = Effect.runSync(decodeEvent({
 *   type: "user/message", seq: 0, time: 0, surfaceOp: "append",
 *   data: { id: "u0", role: "user", content: [{ type: "text", text: "hi" }], source: { kind: "user" } },
 * }));
 * assert.equal(isSurfaceEvent(event) && projectEvent(event)?.id, "u0");
 * ```
 */
export function projectEvent(event: SurfaceEvent): Message | undefined {
  switch (event.type) {
    case "user/message":
      return event.data;
    case "tool/result":
      return event.data.message;
    case "system/message":
    case "assistant/message":
      return event.data.message.content.length === 0
        ? undefined
        : event.data.message;
  }
}
