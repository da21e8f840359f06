/**
 * Writing a session's metadata: history operations that append one
 * `session/metadata` event ({@link setMetadata}, {@link setTitle},
 * {@link tagSession}, {@link untagSession}), to run with `store.update`.
 * The events are marked `ignorable`, so a release that does not know them
 * still reads the log. Reading the metadata is `sessionMetadata`.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import type { SessionMetadataData } from "../core/event.ts";
import { type AppendError, Session } from "../session/session.ts";
import { sessionMetadata } from "../session/metadata.ts";

/**
 * Appends a `session/metadata` event: each key present changes its field
 * (`title`, `cwd` replaced, `null` clearing; `tags` replaced as a set;
 * `labels` and `values` merged by key, `null` removing one). An empty
 * change appends nothing.
 *
 * @param session The session.
 * @param change The fields to change.
 * @returns `Effect<Session, AppendError>`.
 *
 * @example Labels and a working directory
 * ```ts
 * import { Session, sessionMetadata, setMetadata } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const empty = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 * const session = Effect.runSync(setMetadata(empty, { cwd: "/src/app", labels: { team: "infra" } }));
 * assert.deepEqual(sessionMetadata(session).labels, { team: "infra" });
 * assert.equal(sessionMetadata(session).cwd, "/src/app");
 * ```
 */
export function setMetadata(
  session: Session,
  change: SessionMetadataData,
): Effect.Effect<Session, AppendError> {
  if (Object.keys(change).length === 0) return Effect.succeed(session);
  return Session.append(session, {
    type: "session/metadata",
    data: change,
    ignorable: true,
  });
}

/**
 * Sets the session's title (`null` clears it).
 *
 * @param session The session.
 * @param title The title, or `null`.
 * @returns `Effect<Session, AppendError>`.
 *
 * @example Renaming
 * ```ts
 * import { Session, sessionMetadata, setTitle } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const empty = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 * const named = Effect.runSync(Effect.flatMap(setTitle(empty, "draft"), (s) => setTitle(s, "final")));
 * assert.equal(sessionMetadata(named).title, "final");
 * ```
 */
export function setTitle(
  session: Session,
  title: string | null,
): Effect.Effect<Session, AppendError> {
  return setMetadata(session, { title });
}

/**
 * Adds tags to the session's set; appends nothing when it has them all.
 *
 * @param session The session.
 * @param tags Non-empty tags.
 * @returns `Effect<Session, AppendError>`.
 *
 * @example Tagging twice keeps one of each
 * ```ts
 * import { Session, sessionMetadata, tagSession } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const empty = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 * const tagged = Effect.runSync(Effect.flatMap(tagSession(empty, ["a"]), (s) => tagSession(s, ["a", "b"])));
 * assert.deepEqual(sessionMetadata(tagged).tags, ["a", "b"]);
 * ```
 */
export function tagSession(
  session: Session,
  tags: ReadonlyArray<string>,
): Effect.Effect<Session, AppendError> {
  return retag(session, (current) => [...new Set([...current, ...tags])]);
}

/**
 * Removes tags from the session's set; appends nothing when it has none of
 * them.
 *
 * @param session The session.
 * @param tags The tags to remove.
 * @returns `Effect<Session, AppendError>`.
 *
 * @example Removing a tag
 * ```ts
 * import { Session, sessionMetadata, tagSession, untagSession } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const empty = Session.make({ id: "s", createdAt: 0, isSeeded: false });
 * const session = Effect.runSync(Effect.flatMap(tagSession(empty, ["a", "b"]), (s) => untagSession(s, ["a"])));
 * assert.deepEqual(sessionMetadata(session).tags, ["b"]);
 * ```
 */
export function untagSession(
  session: Session,
  tags: ReadonlyArray<string>,
): Effect.Effect<Session, AppendError> {
  return retag(session, (current) => {
    const drop = new Set(tags);
    return current.filter((tag) => !drop.has(tag));
  });
}

// Both edits only add or only remove, so an unchanged count means
// an unchanged set: nothing is appended then.
const retag = (
  session: Session,
  edit: (current: ReadonlyArray<string>) => ReadonlyArray<string>,
): Effect.Effect<Session, AppendError> =>
  Effect.suspend(() => {
    const current = sessionMetadata(session).tags;
    const next = edit(current);
    return next.length === current.length
      ? Effect.succeed(session)
      : setMetadata(session, { tags: next });
  });
