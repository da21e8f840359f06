/**
 * Lazy Effects without a fiber: the Effect-returning forms of the
 * synchronous `Result` functions (`decodeEvent`, `applyEvent`, `replay`)
 * are `Exit` values whose outcome is computed the first time the Effect is
 * run (or read), and kept.
 *
 * Why not `Effect.suspend`: `Effect.runSync` of an `Exit` returns it
 * without starting a fiber (about 0.01 µs), while anything else starts one
 * (about 0.2–0.6 µs), which doubled the cost of decoding a log through the
 * Effect API. An `Exit` built eagerly would do its work when built, even if
 * never run. This one is an `Exit` whose members are read off the real
 * `Exit`, made on first use: building it does no work, running it does the
 * work once, and it behaves as the `Exit` it stands for everywhere an
 * `Exit` or an Effect is expected. A function that throws dies, as it would
 * inside `Effect.suspend`.
 *
 * Internal: nothing here is exported from an entry point.
 *
 * @module
 */
import type * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import type * as Result from "effect/Result";

class Lazy<A, E> {
  thunk: (() => Result.Result<A, E>) | undefined;
  outcome: Exit.Exit<A, E> | undefined;
  constructor(run: () => Result.Result<A, E>) {
    this.thunk = run;
    this.outcome = undefined;
  }
}

const force = <A, E>(lazy: Lazy<A, E>): Exit.Exit<A, E> => {
  let exit = lazy.outcome;
  if (exit === undefined) {
    const run = lazy.thunk;
    lazy.thunk = undefined;
    try {
      const result = run === undefined ? undefined : run();
      exit = result === undefined
        ? Exit.die(new Error("A lazy Exit was forced while being computed"))
        : result._tag === "Success"
        ? Exit.succeed(result.success)
        : Exit.fail(result.failure);
    } catch (defect) {
      exit = Exit.die(defect);
    }
    lazy.outcome = exit;
  }
  return exit;
};

// The members of both kinds of Exit: those they share are copied, the
// others are read off the real Exit once it is made (methods then run with
// the lazy value as `this`, and read every member through it).
{
  const success: object = Exit.succeed(undefined);
  const failure: object = Exit.fail(undefined);
  const protos = [
    Object.getPrototypeOf(success),
    Object.getPrototypeOf(failure),
  ];
  const keys = new Set<PropertyKey>([
    ...Reflect.ownKeys(success),
    ...Reflect.ownKeys(failure),
    ...protos.flatMap((proto) => Reflect.ownKeys(proto)),
  ]);
  const proto: object = Lazy.prototype;
  for (const key of keys) {
    const [a, b] = protos.map((p) => Object.getOwnPropertyDescriptor(p, key));
    if (
      a !== undefined && b !== undefined && "value" in a && "value" in b &&
      a.value === b.value
    ) {
      Object.defineProperty(proto, key, {
        value: a.value,
        writable: false,
        enumerable: a.enumerable ?? false,
        configurable: true,
      });
      continue;
    }
    Object.defineProperty(proto, key, {
      get(this: Lazy<unknown, unknown>): unknown {
        return Reflect.get(force(this), key);
      },
      enumerable: false,
      configurable: true,
    });
  }
}

/**
 * An `Exit` (so an Effect) whose outcome is `run()`'s, computed when it is
 * first run or read and then kept.
 * @internal
 */
export const lazyExit = <A, E>(
  run: () => Result.Result<A, E>,
): Effect.Effect<A, E> => {
  const lazy: Lazy<A, E> = new Lazy(run);
  return lazy as never;
};
