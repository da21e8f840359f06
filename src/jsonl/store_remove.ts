/**
 * The JSONL store's `remove`: under the session's writer claim, the
 * checkpoint first (derived: without it the session is whole), then the log
 * (the step that makes the session gone), the folder synced, then the
 * catalogue's entry and whatever else is named after the log (claims of
 * dead writers, temporary files a killed write left), and the claim last.
 * A removal killed at any point leaves the session whole or gone: before
 * the log's unlink nothing of it is missing but derived data; after it,
 * what is left is found by name only and belongs to no session (a claim
 * whose owner is dead is reclaimed; the catalogue sees the folder changed).
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import * as fs from "node:fs";
import * as nodePath from "node:path";
import { SessionNotFound } from "../store/errors.ts";
import type { StoreCore } from "../store/core.ts";
import { ioError } from "../fs/io.ts";
import { syncFolder, unlinkQuietly } from "../fs/durable_file.ts";
import { checkpointPathOf } from "./checkpoint_file.ts";
import { journalRemoved } from "./catalogue.ts";
import { type HeldClaim, releaseClaim } from "./lock.ts";
import {
  type JsonlStoreState,
  newHandleState,
  pathOf,
  storageError,
  takeClaim,
} from "./store_state.ts";
import { Session } from "../session/session.ts";

/** Removes what else is named after the log, but the claim `own`. */
const removeSidecars = (path: string, own: HeldClaim | undefined): void => {
  const folder = nodePath.dirname(path);
  const prefix = `${nodePath.basename(path)}.`;
  let names: string[];
  try {
    names = fs.readdirSync(folder);
  } catch {
    return;
  }
  for (const name of names) {
    if (!name.startsWith(prefix)) continue;
    const full = nodePath.join(folder, name);
    if (own !== undefined && full === own.name) continue;
    if (own !== undefined && name === nodePath.basename(own.name)) continue;
    unlinkQuietly(full);
  }
};

/**
 * The store's `remove`.
 *
 * @param store The store.
 * @param id The session.
 * @returns Succeeds once the session is gone.
 */
export const removeSession = (
  store: JsonlStoreState,
  id: string,
): ReturnType<StoreCore["remove"]> =>
  Effect.suspend((): ReturnType<StoreCore["remove"]> => {
    const located = pathOf(store, id);
    if (Result.isFailure(located)) return Effect.fail(located.failure);
    const path = located.success;
    if (!fs.existsSync(path)) return Effect.fail(new SessionNotFound({ id }));
    const state = newHandleState(
      path,
      Session.make({ id, createdAt: 0, isSeeded: false }),
    );
    return Effect.acquireUseRelease(
      takeClaim(state, id),
      () =>
        Effect.suspend((): ReturnType<StoreCore["remove"]> => {
          unlinkQuietly(checkpointPathOf(path));
          try {
            fs.unlinkSync(path);
          } catch (cause) {
            return Effect.fail(
              storageError("remove", id, ioError("remove", path, cause)),
            );
          }
          syncFolder(store.root);
          journalRemoved(store.root, id);
          removeSidecars(path, state.lock);
          return Effect.void;
        }),
      () =>
        Effect.sync(() => {
          if (state.lock !== undefined) releaseClaim(state.lock);
          state.lock = undefined;
        }),
    );
  });
