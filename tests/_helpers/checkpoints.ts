/**
 * What "the same session" means for checkpoint tests: a session restored
 * from a checkpoint (and folded on) against a whole replay of the same log.
 *
 * @module
 */
import assert from "node:assert/strict";
import {
  deriveMessages,
  openWork,
  Session,
  type SessionEvent,
} from "@palimpsest/session";
import { surfaceNodes } from "@palimpsest/session/internal";
import { encodeEventLine } from "@palimpsest/session/jsonl";

/** Events as their stored lines. */
export const lines = (events: ReadonlyArray<SessionEvent>): string[] =>
  events.map((e) => encodeEventLine(e));

/**
 * Asserts that `restored` and `whole` have the same surface, messages,
 * held events (those `restored` holds) and open work.
 */
export const assertSameSession = (restored: Session, whole: Session): void => {
  assert.equal(restored.surface.nextSeq, whole.surface.nextSeq);
  assert.deepEqual(surfaceNodes(restored.surface), surfaceNodes(whole.surface));
  assert.equal(restored.surface.replacements, whole.surface.replacements);
  assert.deepEqual(
    deriveMessages(restored.surface),
    deriveMessages(whole.surface),
  );
  const from = Session.heldFrom(restored);
  assert.deepEqual(
    lines(Session.events(restored, from)),
    lines(Session.events(whole, from)),
  );
  assert.deepEqual(
    openWork(Session.events(restored, from)),
    openWork(Session.events(whole)),
  );
};
