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
 * inside `Effect.suspend`. `_tag` and `value`, which a runner reads on every
 * run, are read off the function's `Result` without making the `Exit`;
 * {@link lazyCall} takes the function and its arguments instead of a
 * closure. Together they take about a tenth off decoding a log through
 * `decodeEvent` (docs/performance.md).
 *
 * Effect offers no supported way to do this: `Effect.runSync` skips the
 * fiber only for its own `Exit`, and every lazy constructor it offers
 * (`Effect.suspend`, `Effect.sync`) starts one, which measured 1.7 times
 * this path. So this module copies the members of effect's `Exit`
 * prototypes, a shape effect does not promise to keep. It was checked
 * against effect {@link CHECKED_EFFECT_VERSION}; a test fails on any other
 * version, and docs/architecture.md says what to do on an upgrade.
 *
 * Internal: nothing here is exported from an entry point.
 *
 * @module
 */
import type * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import type * as Result from "effect/Result";

/**
 * The effect version whose `Exit` this module was checked against; the
 * test of this module fails on any other.
 * @internal
 */
export const CHECKED_EFFECT_VERSION: string = "4.1.0";

class Lazy<A, E> {
  thunk: ((a?: unknown, b?: unknown) => Result.Result<A, E>) | undefined;
  a: unknown;
  b: unknown;
  /** The thunk's outcome; `undefined` until it ran, or when it threw. */
  result: Result.Result<A, E> | undefined;
  /** The outcome as an `Exit`: made when another member is read. */
  outcome: Exit.Exit<A, E> | undefined;
  constructor(
    run: (a?: unknown, b?: unknown) => Result.Result<A, E>,
    a?: unknown,
    b?: unknown,
  ) {
    this.thunk = run;
    this.a = a;
    this.b = b;
    this.result = undefined;
    this.outcome = undefined;
  }
}

/**
 * Runs the thunk once: `result` holds what it returned, or `outcome` the
 * defect it threw.
 */
const settle = <A, E>(lazy: Lazy<A, E>): void => {
  const run = lazy.thunk;
  if (run === undefined) return;
  lazy.thunk = undefined;
  try {
    lazy.result = run(lazy.a, lazy.b);
  } catch (defect) {
    lazy.outcome = Exit.die(defect);
  }
  lazy.a = lazy.b = undefined;
};

const force = <A, E>(lazy: Lazy<A, E>): Exit.Exit<A, E> => {
  if (lazy.outcome !== undefined) return lazy.outcome;
  settle(lazy);
  if (lazy.outcome !== undefined) return lazy.outcome;
  const result = lazy.result;
  // Read by its own thunk while it runs: a defect, not kept.
  if (result === undefined) {
    return Exit.die(new Error("A lazy Exit was forced while being computed"));
  }
  const exit: Exit.Exit<A, E> = result._tag === "Success"
    ? Exit.succeed(result.success)
    : Exit.fail(result.failure);
  lazy.outcome = exit;
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
  // What a runner reads on every run, read off the thunk's `Result`
  // without making an Exit of it (a defect's Exit fails, with no value).
  Object.defineProperty(proto, "_tag", {
    get(this: Lazy<unknown, unknown>): unknown {
      settle(this);
      return (this.result ?? force(this))._tag;
    },
    enumerable: false,
    configurable: true,
  });
  Object.defineProperty(proto, "value", {
    get(this: Lazy<unknown, unknown>): unknown {
      settle(this);
      const result = this.result;
      return result?._tag === "Success" ? result.success : undefined;
    },
    enumerable: false,
    configurable: true,
  });
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

/**
 * {@link lazyExit} of `f(a, b)`, without a closure to make per call.
 * @internal
 */
export const lazyCall = <A, E, X, Y>(
  f: (a: X, b: Y) => Result.Result<A, E>,
  a: X,
  b: Y,
): Effect.Effect<A, E> => new Lazy(f as never, a, b) as never;
