/**
 * The system prompt: the `system/message` at the head of the surface, set by
 * appending it (an empty surface), prepending it (a surface whose head is
 * not one: a session created without a prompt, or imported) or replacing
 * the head. The `turn`/`step` of the message is
 * read off the log (the latest `step/start`, else the latest `turn/start`
 * with step 0, else both 0).
 *
 * @module
 */
import * as Effect from "effect/Effect";
import type { ContentBlock } from "../core/message.ts";
import type { SystemMessageData } from "../core/event.ts";
import { surfaceEvent } from "../surface/mod.ts";
import { type AppendError, Session } from "../session/session.ts";
import { currentTurnStep } from "./surface_nodes.ts";

const sameContent = (
  a: ReadonlyArray<ContentBlock>,
  b: ReadonlyArray<ContentBlock>,
): boolean => JSON.stringify(a) === JSON.stringify(b);

/**
 * Sets the system prompt. On an empty surface it appends the head
 * `system/message`; when the head is a `system/message` it appends one
 * replacing the head and citing it, or returns the session unchanged when
 * the prompt is the same; on a surface whose head is something else (a
 * session created without a prompt, or imported from another tool) it
 * appends one with `surfaceOp: "prepend"`, which goes before the head.
 * `""` on a surface without a system head changes nothing.
 *
 * The message has id `system-<seq>` (its own seq), source
 * `{kind: "plugin", plugin: "system-prompt"}`, and one text block, or no
 * content for `""` (no system prompt: the node stays, no message derives).
 *
 * @param session The session.
 * @param text The prompt; `""` for none.
 * @returns `Effect<Session, AppendError>`.
 *
 * @example Setting and changing the prompt
 * ```ts
 * import { deriveMessages, setSystemPrompt, Session } from "@palimpsest/session";
 * import { surfaceNodes } from "@palimpsest/session/internal";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const program = Effect.gen(function* () {
 *   const empty = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 *   const first = yield* setSystemPrompt(empty, "Be brief.");
 *   const second = yield* setSystemPrompt(first, "Be thorough.");
 *   return second.surface;
 * });
 * const surface = Effect.runSync(program);
 * assert.deepEqual(surfaceNodes(surface), [1]);
 * assert.deepEqual(deriveMessages(surface)[0]?.content, [{ type: "text", text: "Be thorough." }]);
 * ```
 */
export function setSystemPrompt(
  session: Session,
  text: string,
): Effect.Effect<Session, AppendError> {
  return Effect.suspend((): Effect.Effect<Session, AppendError> => {
    const surface = session.surface;
    const seq = surface.nextSeq;
    const content: ReadonlyArray<ContentBlock> = text === ""
      ? []
      : [{ type: "text", text }];
    const { turn, step } = currentTurnStep(session);
    const data: SystemMessageData = {
      turn,
      step,
      message: {
        id: `system-${seq}`,
        role: "system",
        content,
        source: { kind: "plugin", plugin: "system-prompt" },
      },
    };
    const head = surface.head;
    if (head === undefined) {
      return Session.append(session, {
        type: "system/message",
        surfaceOp: "append",
        data,
      });
    }
    const event = surfaceEvent(surface, head);
    if (event === undefined || event.type !== "system/message") {
      if (text === "") return Effect.succeed(session);
      return Session.append(session, {
        type: "system/message",
        surfaceOp: "prepend",
        data,
      });
    }
    if (sameContent(event.data.message.content, content)) {
      return Effect.succeed(session);
    }
    return Session.append(session, {
      type: "system/message",
      surfaceOp: { op: "replace", startSeq: head, endSeq: head },
      sourceEventSeqs: [head],
      data,
    });
  });
}
