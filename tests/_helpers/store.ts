/**
 * Running programs against a JSONL store in a temp folder: the folder, and
 * the runners that provide the store and close every handle a program
 * opened when it ends.
 *
 * @module
 */
import { Effect, type Exit, type Scope } from "effect";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { layerJsonlStore, SessionStore } from "@palimpsest/session";

/** A fresh temp folder. */
export const tempDir = (prefix = "palimpsest-"): string =>
  fs.mkdtempSync(path.join(os.tmpdir(), prefix));

/**
 * Runs a program needing the store over `root`, in one scope: handles it
 * opens are released when it ends.
 */
export const withStore = <A, E>(
  root: string,
  program: Effect.Effect<A, E, SessionStore | Scope.Scope>,
): Promise<A> =>
  Effect.runPromise(
    Effect.scoped(program).pipe(Effect.provide(layerJsonlStore({ root }))),
  );

/** Runs a program needing the store, in one scope, and returns its exit. */
export const exitWithStore = <A, E>(
  root: string,
  program: Effect.Effect<A, E, SessionStore | Scope.Scope>,
): Promise<Exit.Exit<A, E>> =>
  Effect.runPromise(
    Effect.exit(Effect.scoped(program)).pipe(
      Effect.provide(layerJsonlStore({ root })),
    ),
  );

/** {@link withStore} of a program given the store. */
export const useStore = <A, E>(
  root: string,
  use: (store: SessionStore) => Effect.Effect<A, E, SessionStore | Scope.Scope>,
): Promise<A> => withStore(root, SessionStore.use(use));

/** {@link exitWithStore} of a program given the store. */
export const useStoreExit = <A, E>(
  root: string,
  use: (store: SessionStore) => Effect.Effect<A, E, SessionStore | Scope.Scope>,
): Promise<Exit.Exit<A, E>> => exitWithStore(root, SessionStore.use(use));

/**
 * The writer claim files of a session file (`<file>.lock.<uuid>`, and the
 * 0.2 `<file>.lock`), as names in its folder.
 */
export const claimsOf = (file: string): ReadonlyArray<string> => {
  const base = path.basename(file);
  return fs.readdirSync(path.dirname(file)).filter((name) =>
    name === `${base}.lock` || name.startsWith(`${base}.lock.`)
  ).sort();
};
