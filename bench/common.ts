/**
 * What the benchmarks share: a collection between runs, the best of several
 * runs, and the fold and decode that stop a benchmark whose input is wrong.
 * It is not part of the package.
 *
 * @module
 */
import { Result } from "effect";
import {
  emptySurface,
  type SessionEvent,
  type Surface,
} from "@palimpsest/session";
import { replayResult } from "@palimpsest/session/internal";
import { decodeEventResult } from "@palimpsest/session/schema";

/** Collects garbage when the process runs with `--v8-flags=--expose-gc`; otherwise does nothing. */
export const gc = (): void => {
  const collect: unknown = Reflect.get(globalThis, "gc");
  if (typeof collect === "function") collect();
};

/**
 * The least time in ms of `runs` calls of `f`: the least disturbed run of
 * deterministic work. With `collect`, each run follows a {@link gc}.
 */
export const best = (
  runs: number,
  f: () => void,
  collect = false,
): number => {
  let min = Infinity;
  for (let i = 0; i < runs; i++) {
    if (collect) gc();
    const start = performance.now();
    f();
    min = Math.min(min, performance.now() - start);
  }
  return min;
};

/** Folds a benchmark's events onto `from`; throws when they do not fold. */
export const fold = (
  events: Iterable<SessionEvent>,
  from: Surface = emptySurface,
): Surface => {
  const result = replayResult(events, from);
  if (Result.isFailure(result)) {
    throw new Error(`Workload does not fold: ${result.failure.error._tag}`);
  }
  return result.success;
};

/** Decodes one raw benchmark event; throws when it does not decode. */
export const decode = (raw: unknown): SessionEvent => {
  const result = decodeEventResult(raw);
  if (Result.isFailure(result)) {
    throw new Error(`Bench event does not decode: ${result.failure._tag}`);
  }
  return result.success;
};
