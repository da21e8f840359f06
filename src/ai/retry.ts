/**
 * Retrying a model request that failed for a passing reason: the policy
 * the turn loop and the compaction engine share.
 *
 * {@link isTransientError} tells a failure worth a second try: an HTTP
 * status 408, 409, 429, 5xx or 529 (Anthropic's "overloaded"), a rate
 * limit or a provider-side error without a status, and a connection that
 * failed or was reset (`NetworkError` with reason `TransportError`). A
 * refused request (400, a context overflow, a bad key, a spent quota) is
 * not retried.
 *
 * The delay before a retry is the schedule's ({@link retrySchedule}:
 * exponential from 500 ms, doubling, with jitter) or the provider's own
 * when it asks for a longer wait ({@link retryAfterMillis}: the
 * `retry-after-ms` header, `retry-after` in seconds or as an HTTP date, or
 * a rate limit's `retryAfter`). A wait longer than
 * {@link MAX_RETRY_AFTER_MILLIS} is not waited for: the error is returned
 * at once. Waiting goes through `Clock`, so a test runs on `TestClock`.
 *
 * Nothing runs when nothing fails: the schedule is started at the first
 * transient failure.
 *
 * @module
 */
import * as Clock from "effect/Clock";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Pull from "effect/Pull";
import * as Schedule from "effect/Schedule";
import type { AiError } from "effect/ai";

/**
 * How a model request is retried: a number of retries with the default
 * backoff ({@link retrySchedule}), or a `Schedule` fed the errors (its
 * delays, lengthened to a `retry-after` the provider sent; it ends the
 * retries when it ends). `0` turns retries off.
 */
export type ModelRetry = number | Schedule.Schedule<unknown, AiError.AiError>;

/** The retries of a model request when none is configured. */
export const DEFAULT_MODEL_RETRIES = 2;

/** The longest `retry-after` waited for: 60 seconds. */
export const MAX_RETRY_AFTER_MILLIS = 60_000;

/** One retry of a model request, as it is reported. */
export interface ModelRetryAttempt {
  /** The retry's number: 1 for the first. */
  readonly attempt: number;
  /** How long it waits before the request is sent again, in milliseconds. */
  readonly delayMillis: number;
  /** The failure that is retried. */
  readonly error: AiError.AiError;
}

/**
 * The default backoff: `retries` retries, the first after 500 ms, each
 * next one twice as long, every delay jittered (×0.8 to ×1.2).
 *
 * @param retries How many retries; `0` or less means none.
 * @returns The schedule.
 *
 * @example Three retries
 * ```ts
 * import { retrySchedule } from "@palimpsest/session/ai";
 * import { Schedule } from "effect";
 * import assert from "node:assert/strict";
 *
 * assert.ok(Schedule.isSchedule(retrySchedule(3)));
 * ```
 */
export function retrySchedule(
  retries: number,
): Schedule.Schedule<unknown, AiError.AiError> {
  return Schedule.exponential("500 millis", 2).pipe(
    Schedule.jittered,
    Schedule.upTo({ times: Math.max(0, Math.floor(retries)) }),
  );
}

const statusOf = (error: AiError.AiError): number | undefined => {
  const reason = error.reason;
  return "http" in reason ? reason.http?.response?.status : undefined;
};

/**
 * Whether a model failure is worth retrying: a status 408, 409, 429, 5xx
 * or 529, a rate limit or a provider error without a status, or a
 * connection that failed or was reset.
 *
 * @param error A model error.
 * @returns True when a retry may succeed.
 *
 * @example Overloaded and refused
 * ```ts
 * import { isTransientError } from "@palimpsest/session/ai";
 * import { AiError } from "effect/ai";
 * import assert from "node:assert/strict";
 *
 * const overloaded = AiError.make({ module: "P", method: "stream",
 *   reason: new AiError.InternalProviderError({ description: "overloaded",
 *     http: { response: { status: 529, headers: {} } } }) });
 * const refused = AiError.make({ module: "P", method: "stream",
 *   reason: new AiError.InvalidRequestError({ description: "bad field" }) });
 * assert.equal(isTransientError(overloaded), true);
 * assert.equal(isTransientError(refused), false);
 * ```
 */
export function isTransientError(error: AiError.AiError): boolean {
  const status = statusOf(error);
  if (status !== undefined) {
    return status === 408 || status === 409 || status === 429 ||
      status >= 500;
  }
  const reason = error.reason;
  switch (reason._tag) {
    case "RateLimitError":
    case "InternalProviderError":
      return true;
    case "NetworkError":
      return reason.reason === "TransportError";
    default:
      return false;
  }
}

const headerOf = (error: AiError.AiError, name: string): string | undefined => {
  const reason = error.reason;
  const headers = "http" in reason ? reason.http?.response?.headers : undefined;
  if (headers === undefined) return undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name && typeof value === "string") return value;
  }
  return undefined;
};

/**
 * The wait the provider asked for before a retry, in milliseconds: the
 * `retry-after-ms` header, else `retry-after` (seconds, or an HTTP date
 * counted from `now`), else a rate limit's `retryAfter`; `undefined` when
 * it asked for none.
 *
 * @param error A model error.
 * @param now The current time, epoch milliseconds (the `Clock`'s).
 * @returns The wait, never negative, or `undefined`.
 *
 * @example A retry-after in seconds
 * ```ts
 * import { retryAfterMillis } from "@palimpsest/session/ai";
 * import { AiError } from "effect/ai";
 * import assert from "node:assert/strict";
 *
 * const error = AiError.make({ module: "P", method: "stream",
 *   reason: new AiError.RateLimitError({
 *     http: { response: { status: 429, headers: { "Retry-After": "3" } } } }) });
 * assert.equal(retryAfterMillis(error, 0), 3000);
 * ```
 */
export function retryAfterMillis(
  error: AiError.AiError,
  now: number,
): number | undefined {
  const ms = headerOf(error, "retry-after-ms");
  if (ms !== undefined && ms.trim() !== "" && Number.isFinite(Number(ms))) {
    return Math.max(0, Number(ms));
  }
  const after = headerOf(error, "retry-after");
  if (after !== undefined && after.trim() !== "") {
    const seconds = Number(after);
    if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
    const date = Date.parse(after);
    if (Number.isFinite(date)) return Math.max(0, date - now);
  }
  const reason = error.reason;
  if (reason._tag === "RateLimitError" && reason.retryAfter !== undefined) {
    return Math.max(0, Duration.toMillis(reason.retryAfter));
  }
  return undefined;
}

/**
 * The retry decision of one request: given a failure, the retry to make
 * (after its wait, already slept) or `undefined` to give up. The schedule
 * starts at the first transient failure.
 * @internal
 */
export type Retrier = (
  error: AiError.AiError,
) => Effect.Effect<ModelRetryAttempt | undefined>;

/**
 * A {@link Retrier} for `retry` (the default retries when absent), telling
 * `onRetry` each retry before its wait.
 * @internal
 */
export const makeRetrier = (
  retry: ModelRetry | undefined,
  onRetry: (attempt: ModelRetryAttempt) => Effect.Effect<void>,
): Retrier => {
  const policy = retry ?? DEFAULT_MODEL_RETRIES;
  if (policy === 0) return () => Effect.succeed(undefined);
  const schedule = typeof policy === "number" ? retrySchedule(policy) : policy;
  let step:
    | ((
      now: number,
      error: AiError.AiError,
    ) => Pull.Pull<[unknown, Duration.Duration], never, unknown>)
    | undefined;
  let attempt = 0;
  return (error) =>
    !isTransientError(error) ? Effect.succeed(undefined) : Effect.gen(
      function* () {
        step ??= yield* Schedule.toStep(schedule);
        const now = yield* Clock.currentTimeMillis;
        const next = yield* step(now, error).pipe(
          Pull.catchDone(() => Effect.succeed(undefined)),
        );
        if (next === undefined) return undefined;
        const asked = retryAfterMillis(error, now);
        if (asked !== undefined && asked > MAX_RETRY_AFTER_MILLIS) {
          return undefined;
        }
        const delayMillis = Math.max(
          Math.round(Duration.toMillis(next[1])),
          asked ?? 0,
        );
        attempt++;
        const made: ModelRetryAttempt = { attempt, delayMillis, error };
        yield* onRetry(made);
        yield* Effect.sleep(Duration.millis(delayMillis));
        return made;
      },
    );
};

/**
 * Runs `effect`, retrying it after a transient model failure as `retry`
 * says.
 * @internal
 */
export const withModelRetry = <A, R>(
  effect: Effect.Effect<A, AiError.AiError, R>,
  retry: ModelRetry | undefined,
  onRetry: (attempt: ModelRetryAttempt) => Effect.Effect<void>,
): Effect.Effect<A, AiError.AiError, R> =>
  Effect.suspend(() => {
    const retrier = makeRetrier(retry, onRetry);
    const run: Effect.Effect<A, AiError.AiError, R> = Effect.catch(
      effect,
      (error) =>
        Effect.flatMap(
          retrier(error),
          (made) => made === undefined ? Effect.fail(error) : run,
        ),
    );
    return run;
  });
