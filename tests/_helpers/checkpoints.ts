/**
 * What "the same session" means for checkpoint tests: a session restored
 * from a checkpoint (and folded on) against a whole replay of the same log.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Effect, Result, type Scope } from "effect";
import {
  type OpenError,
  type Session,
  type SessionEvent,
  type SessionHandle,
  SessionSeq,
  SessionStore,
  type Surface,
} from "@palimpsest/session";
import {
  logEvent,
  surfaceEvent,
  surfaceNodes,
} from "@palimpsest/session/internal";
import { renderSessionHtml } from "@palimpsest/session/view";
import { restoreSurface } from "../../src/surface/restore.ts";

export {
  assertSameFold,
  assertSameSession,
  lines,
} from "../../src/testing/checkpoint_kit.ts";

/**
 * The checkpoint suite's readers for a store test: the HTML view, asked of a
 * session opened from a checkpoint as of the whole.
 */
export const viewReaders: {
  readonly view: (session: Session) => string;
} = {
  view: (session) => Result.getOrThrow(renderSessionHtml(session)),
};

/**
 * The surface rebuilt from its nodes and the events from `heldFrom` on, as
 * a checkpoint restores it (its order keys renumbered, the nodes below
 * `heldFrom` pinned).
 */
export const restored = (surface: Surface, heldFrom: number): Surface => {
  const nodes = surfaceNodes(surface).map((seq) =>
    surfaceEvent(surface, seq) ?? assert.fail()
  );
  const held: SessionEvent[] = [];
  for (let seq = heldFrom; seq < surface.nextSeq; seq++) {
    held.push(logEvent(surface, SessionSeq.make(seq)) ?? assert.fail());
  }
  return restoreSurface(
    [
      surface.baseSeq,
      SessionSeq.make(heldFrom),
      surface.nextSeq,
      surface.replacements,
    ],
    nodes,
    held,
    undefined,
  ) ?? assert.fail("the surface does not restore");
};

/**
 * Session `id` opened the ordinary way (from its checkpoint, if any) and
 * replayed whole, in the store of the context.
 */
export const openedAndWhole = (id: string): Effect.Effect<
  { readonly opened: SessionHandle; readonly whole: SessionHandle },
  OpenError,
  SessionStore | Scope.Scope
> =>
  Effect.gen(function* () {
    const store = yield* SessionStore;
    const opened = yield* store.open(id);
    const whole = yield* store.open(id, { wholeLog: true });
    return { opened, whole };
  });
