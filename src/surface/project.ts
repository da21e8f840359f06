/**
 * The projection of one surface event to the message it derives, shared by
 * the fold (which records it per node) and by callers that need it for a
 * single event.
 *
 * @module
 */
import type { Message } from "../message.ts";
import type { SurfaceEvent } from "../event.ts";

/**
 * The message a surface event projects to, or undefined when empty.
 * @internal
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
