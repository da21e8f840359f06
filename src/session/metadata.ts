/**
 * A session's current metadata ({@link sessionMetadata}): what the log
 * before its held events set (its prior, which a checkpoint keeps), then
 * the `session/metadata` events it holds. The values and their fold are
 * `metadata_fold.ts`.
 *
 * @module
 */
import type { Session } from "./session.ts";
import { heldEvents, priorOf } from "./prior.ts";
import {
  EMPTY_METADATA,
  foldMetadata,
  type SessionMetadata,
} from "./metadata_fold.ts";

/**
 * A session's current metadata: what its `session/metadata` events set,
 * the last write winning. A session opened from a checkpoint (or holding
 * only the tail of a long log) knows what the events it does not hold set:
 * the checkpoint keeps it.
 *
 * @param session The session.
 * @returns Its title, tags, labels, working directory and values.
 *
 * @example Reading what was set
 * ```ts
 * import { Session, sessionMetadata, setTitle, tagSession } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const program = Effect.gen(function* () {
 *   const empty = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 *   const titled = yield* setTitle(empty, "Fix the build");
 *   return yield* tagSession(titled, ["ci", "urgent"]);
 * });
 * const metadata = sessionMetadata(Effect.runSync(program));
 * assert.equal(metadata.title, "Fix the build");
 * assert.deepEqual(metadata.tags, ["ci", "urgent"]);
 * ```
 */
export function sessionMetadata(session: Session): SessionMetadata {
  return foldMetadata(
    priorOf(session)?.metadata ?? EMPTY_METADATA,
    heldEvents(session),
  );
}
