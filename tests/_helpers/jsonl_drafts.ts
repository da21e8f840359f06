/**
 * Small helpers for the persistence tests: temp folders and running
 * programs against a store. The workload's drafts live in `build.ts` and are
 * re-exported here for the tests that take them with these helpers.
 *
 * @module
 */
import { Effect, Exit } from "effect";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { layerJsonlStore, type SessionStore } from "@palimpsest/session";

export {
  assistantCallDraft,
  assistantTextDraft,
  toolCallDraft,
  toolResultDraft,
  turnBatches,
  userDraft,
} from "./build.ts";

/** A fresh temp folder. */
export const tempDir = (prefix = "palimpsest-"): string =>
  fs.mkdtempSync(path.join(os.tmpdir(), prefix));

/** Runs a program needing the store over `root`. */
export const withStore = <A, E>(
  root: string,
  program: Effect.Effect<A, E, SessionStore>,
): Promise<A> =>
  Effect.runPromise(program.pipe(Effect.provide(layerJsonlStore({ root }))));

/** Runs a program needing the store and returns its exit. */
export const exitWithStore = <A, E>(
  root: string,
  program: Effect.Effect<A, E, SessionStore>,
): Promise<Exit.Exit<A, E>> =>
  Effect.runPromise(
    Effect.exit(program).pipe(Effect.provide(layerJsonlStore({ root }))),
  );

/** The failure of an exit, or throws when it succeeded or died. */
export const failureOf = <A, E>(exit: Exit.Exit<A, E>): E => {
  if (Exit.isSuccess(exit)) {
    throw new Error(`Expected a failure but the effect succeeded`);
  }
  const found = exit.cause.reasons.find((r) => r._tag === "Fail");
  if (found === undefined || found._tag !== "Fail") {
    throw new Error(`Expected a typed failure but found ${String(exit.cause)}`);
  }
  return found.error;
};

/** The value of an exit, or throws with its cause. */
export const failureOrValue = <A, E>(exit: Exit.Exit<A, E>): A => {
  if (Exit.isSuccess(exit)) return exit.value;
  throw new Error(`Expected a success but found ${String(exit.cause)}`);
};

/** The header line of a v3 session. */
export const headerLine = (id: string): string =>
  `{"type":"session","version":3,"id":${
    JSON.stringify(id)
  },"createdAt":0,"isSeeded":false}\n`;

/** The seeded generator of the benchmark workload, shared by the tests. */
export { mulberry32 } from "../../bench/workload.ts";
