/**
 * Retention: {@link retainSessions} removes the sessions of a store that
 * are older than an age or past a count, newest kept, through the store's
 * own `list` and `remove`, so it works on every layer and never removes a
 * session a live writer holds (`remove` takes the writer claim first).
 *
 * @module
 */
import * as Clock from "effect/Clock";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import type { ListFilter } from "./catalogue.ts";
import type { ListError, RemoveError, SessionStore } from "./store.ts";

/** Options of {@link retainSessions}. */
export interface RetainOptions {
  /** Remove the sessions not changed for this long. */
  readonly maxAge?: Duration.Input;
  /** Keep at most this many sessions, the most recently changed. */
  readonly maxCount?: number;
  /** Only these sessions are considered (and counted). */
  readonly filter?: ListFilter;
}

/** What {@link retainSessions} did. */
export interface RetainResult {
  /** The sessions removed. */
  readonly removed: ReadonlyArray<string>;
  /** The sessions due for removal that a live writer held: kept. */
  readonly locked: ReadonlyArray<string>;
}

/**
 * Removes the sessions past `maxAge` (by their last change) or past
 * `maxCount` (the most recently changed kept), among those `filter`
 * keeps. A session a writer holds is skipped and reported in `locked`;
 * one removed meanwhile by someone else is skipped silently. With neither
 * limit, nothing is removed.
 *
 * @param store The store.
 * @param options The limits.
 * @returns `Effect<RetainResult, ListError | RemoveError>`.
 *
 * @example Keeping the newest session
 * ```ts
 * import { layerMemoryStore, retainSessions, SessionStore } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const program = Effect.gen(function* () {
 *   const store = yield* SessionStore;
 *   yield* Effect.scoped(store.create({ id: "old", createdAt: 0, isSeeded: false }));
 *   yield* Effect.scoped(store.create({ id: "new", createdAt: 1, isSeeded: false }));
 *   return yield* retainSessions(store, { maxCount: 1 });
 * });
 * const result = Effect.runSync(program.pipe(Effect.provide(layerMemoryStore())));
 * assert.equal(result.removed.length, 1);
 * ```
 */
export function retainSessions(
  store: SessionStore,
  options: RetainOptions,
): Effect.Effect<RetainResult, ListError | RemoveError> {
  return Effect.gen(function* () {
    const removed: string[] = [];
    const locked: string[] = [];
    const { maxAge, maxCount } = options;
    if (maxAge === undefined && maxCount === undefined) {
      return { removed, locked };
    }
    const now = yield* Clock.currentTimeMillis;
    const oldest = maxAge === undefined
      ? undefined
      : now - Duration.toMillis(Duration.fromInputUnsafe(maxAge));
    const due: string[] = [];
    let cursor: string | undefined;
    let seen = 0;
    do {
      const page = yield* store.list({
        order: { by: "updated", direction: "desc" },
        limit: 1000,
        ...(options.filter === undefined ? {} : { filter: options.filter }),
        ...(cursor === undefined ? {} : { cursor }),
      });
      for (const entry of page.sessions) {
        const past = maxCount !== undefined && seen >= maxCount;
        const old = oldest !== undefined && entry.updatedAt < oldest;
        if (past || old) due.push(entry.id);
        seen += 1;
      }
      cursor = page.cursor;
    } while (cursor !== undefined);
    for (const id of due) {
      const outcome = yield* store.remove(id).pipe(
        Effect.as("removed" as const),
        Effect.catchTag(
          "SessionLocked",
          () => Effect.succeed("locked" as const),
        ),
        Effect.catchTag(
          "SessionNotFound",
          () => Effect.succeed("gone" as const),
        ),
      );
      if (outcome === "removed") removed.push(id);
      else if (outcome === "locked") locked.push(id);
    }
    return { removed, locked };
  });
}
