/**
 * Where the catalogue commands (`list`, `rm`, `title`, `tag`) find a
 * store: a JSONL folder or a session file in one (`ID.jsonl`, its folder
 * the store), or a PostgreSQL address (`postgres://…`, with `?session=ID`
 * for a session). The PostgreSQL module is loaded only for an address.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  type HistoryReadError,
  layerJsonlStore,
  type NotAnAppend,
  type OpenError,
  type Session,
  type SessionStore,
  SessionStore as SessionStoreTag,
  type StorageError,
  type WriteError,
} from "@palimpsest/session";
import { decodeSessionId } from "@palimpsest/session/jsonl";
import type { InvalidAddress } from "@palimpsest/session/postgres";
import { onPostgres } from "./load.ts";

/** A path that is neither a store folder nor a session file in one. */
export interface NotAStore {
  /** The tag. */
  readonly _tag: "NotAStore";
  /** A sentence for people. */
  readonly message: string;
}

/** Why a store could not be reached. */
export type ReachError = StorageError | InvalidAddress | NotAStore;

const POSTGRES = /^postgres(ql)?:\/\//i;

/** The first positional of a command on one session of a store. */
export const SESSION_POSITIONAL = {
  name: "FILE",
  summary: "the session file, or postgres://…?session=ID",
} as const;

/** The URL of a store address, without its `session` parameter. */
const storeUrl = (address: string): string => {
  try {
    const url = new URL(address);
    url.searchParams.delete("session");
    return url.toString();
  } catch {
    return address;
  }
};

/**
 * Runs `f` on the store of a folder or a PostgreSQL address.
 *
 * @param where A folder or `postgres://…`.
 * @param f What to do with the store.
 * @returns `f`'s effect.
 */
export const onStore = <A, E>(
  where: string,
  f: (store: SessionStore) => Effect.Effect<A, E>,
): Effect.Effect<A, E | ReachError> => {
  if (POSTGRES.test(where)) {
    return Effect.flatMap(
      Effect.promise(() => import("@palimpsest/session/postgres")),
      (postgres) =>
        Effect.scoped(
          Effect.flatMap(
            postgres.makePostgresStore({ url: storeUrl(where) }),
            f,
          ),
        ),
    );
  }
  if (!fs.existsSync(where) || !fs.statSync(where).isDirectory()) {
    return Effect.fail({
      _tag: "NotAStore",
      message: `Expected ${
        JSON.stringify(where)
      } to be a store folder or a postgres:// address`,
    });
  }
  return Effect.flatMap(SessionStoreTag, f).pipe(
    Effect.provide(layerJsonlStore({ root: where })),
  );
};

/**
 * Runs `f` on the store of a session and its id: a session file in a
 * store folder (`ID.jsonl`), or `postgres://…?session=ID`.
 *
 * @param where A session file or address.
 * @param f What to do with the store and the id.
 * @returns `f`'s effect.
 */
export const onSession = <A, E>(
  where: string,
  f: (store: SessionStore, id: string) => Effect.Effect<A, E>,
): Effect.Effect<A, E | ReachError> => {
  const onAddress = onPostgres(
    where,
    (postgres, address) =>
      Effect.scoped(
        Effect.flatMap(
          postgres.makePostgresStore({ url: address.url }),
          (store) => f(store, address.session),
        ),
      ),
  );
  if (onAddress !== undefined) return onAddress;
  const base = path.basename(where);
  const id = base.endsWith(".jsonl")
    ? decodeSessionId(base.slice(0, -".jsonl".length))
    : undefined;
  if (id === undefined) {
    return Effect.fail({
      _tag: "NotAStore",
      message: `Expected ${
        JSON.stringify(where)
      } to be a session file of a store (ID.jsonl) or postgres://…?session=ID`,
    });
  }
  return onStore(path.dirname(where), (store) => f(store, id));
};

/**
 * Appends to a session what `change` makes of it, as its writer: a session
 * file in a store folder (`ID.jsonl`), or `postgres://…?session=ID`.
 *
 * @param where A session file or address.
 * @param change The session after the change, or why not.
 * @returns The session after the change.
 */
export const updateSession = <E>(
  where: string,
  change: (session: Session) => Effect.Effect<Session, E>,
): Effect.Effect<
  Session,
  | E
  | NotAnAppend
  | WriteError
  | HistoryReadError<E>
  | OpenError
  | ReachError
> =>
  onSession(where, (store, id) =>
    Effect.map(
      store.withSession(id, (writer) => store.update(writer, change)),
      (done) => done.session,
    ));
