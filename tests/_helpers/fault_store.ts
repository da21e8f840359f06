/**
 * What the PostgreSQL fault tests share: a store over the fault relay
 * (`fault_proxy.ts`), raw SQL straight to the server to see what it holds,
 * the batches whose turns mark them, and the tally of outcomes they print.
 *
 * @module
 */
import assert from "node:assert/strict";
import { Cause, Effect, Exit, Redacted, Schedule, Scope } from "effect";
import * as Reactivity from "effect/reactivity/Reactivity";
import { PgClient } from "@effect/sql-pg";
import {
  AppendOutcomeUnknown,
  type EventDraft,
  type SessionHandle,
} from "@palimpsest/session";
import {
  makePostgresStore,
  type PostgresSessionStore,
  type PostgresStoreOptions,
} from "../../src/postgres/mod.ts";
import { failureOf } from "./then.ts";
import { type Fault, type FaultProxy, startFaultProxy } from "./fault_proxy.ts";

/**
 * Trials per fault point: 20 in the normal suite, 40 under
 * `FUZZ_PROFILE=long`.
 */
export const TRIALS: number = Number(
  Deno.env.get("PALIMPSEST_FAULT_TRIALS") ??
    (Deno.env.get("FUZZ_PROFILE") === "long" ? 40 : 20),
);

/** A fault point: its name, and the faults of trial `k` armed together. */
export type FaultPoint = readonly [
  string,
  (k: number) => ReadonlyArray<Fault>,
];

/** A point whose faults are the same at every trial. */
export const point = (
  name: string,
  ...faults: ReadonlyArray<Fault>
): FaultPoint => [name, () => faults];

/**
 * `fault` as a stall: the client's side closed, the message sent on 40 to
 * 400 ms later (by trial `k`).
 */
export const stalled = (fault: Fault, k: number): Fault => ({
  ...fault,
  action: "hold",
  holdMillis: 40 + (k * 137) % 360,
});

export const WRITER = "palimpsest writer";
export const READER = "palimpsest";
export const CHECK = "palimpsest check";
export const header = (id: string) => ({ id, createdAt: 1, isSeeded: false });

/** Batch `k`: `size` turn starts whose turns mark it (k * 10 + i). */
export const batch = (k: number, size: number): EventDraft[] =>
  Array.from({ length: size }, (_, i) => ({
    type: "turn/start",
    data: { turn: k * 10 + i },
  }));

/**
 * Runs raw SQL on the database, straight to the server (not through the
 * relay), over one connection kept per database: a connection costs a
 * password exchange.
 */
export const sql = async (
  url: string,
  text: string,
  params: ReadonlyArray<unknown> = [],
): Promise<ReadonlyArray<Record<string, unknown>>> => {
  let client = direct.get(url);
  if (client === undefined) {
    const scope = Effect.runSync(Scope.make());
    client = {
      scope,
      sql: await Effect.runPromise(Scope.provide(
        PgClient.makeClient({ url: Redacted.make(url) }).pipe(
          Effect.provide(Reactivity.layer),
        ),
        scope,
      )),
    };
    direct.set(url, client);
  }
  return Effect.runPromise(
    client.sql.unsafe<Record<string, unknown>>(text, [...params]),
  );
};
const direct = new Map<
  string,
  { readonly scope: Scope.Closeable; readonly sql: PgClient.PgClient }
>();

/** Closes the direct connection to a database, before it is dropped. */
export const closeDirect = async (url: string) => {
  const client = direct.get(url);
  direct.delete(url);
  if (client !== undefined) {
    await Effect.runPromise(Scope.close(client.scope, Exit.void));
  }
};

/** The stored events of a session as `[type, turn]`, in seq order. */
export const storedMarks = async (
  url: string,
  id: string,
): Promise<Array<readonly [string, number]>> => {
  const rows = await sql(
    url,
    "SELECT line FROM palimpsest_events WHERE session_id = $1 ORDER BY seq",
    [id],
  );
  return rows.map((row) => {
    const event = JSON.parse(String(row.line));
    return [event.type, event.data.turn] as const;
  });
};

/**
 * Whether a session's head row is stored, and the turns of its stored
 * `turn/start` events, read in one snapshot (a create still in flight is
 * seen whole or not at all).
 */
export const storedSession = async (
  url: string,
  id: string,
): Promise<{ readonly exists: boolean; readonly turns: number[] }> => {
  const rows = await sql(
    url,
    `SELECT e.line FROM palimpsest_sessions s
     LEFT JOIN palimpsest_events e ON e.session_id = s.id
     WHERE s.id = $1 ORDER BY e.seq`,
    [id],
  );
  const turns = rows.flatMap((row) => {
    if (row.line === null) return [];
    const event = JSON.parse(String(row.line));
    return event.type === "turn/start" ? [Number(event.data.turn)] : [];
  });
  return { exists: rows.length > 0, turns };
};

/** The turns of the `turn/start` events stored for a session, in order. */
export const storedTurns = async (url: string, id: string): Promise<number[]> =>
  (await storedMarks(url, id)).filter(([type]) => type === "turn/start").map((
    [, turn],
  ) => turn);

/** How many times each mark of batch `k` is stored (all equal, or a lie). */
export const copiesOf = (
  turns: ReadonlyArray<number>,
  k: number,
  size: number,
) => {
  const counts = Array.from(
    { length: size },
    (_, i) => turns.filter((t) => t === k * 10 + i).length,
  );
  assert.ok(
    counts.every((c) => c === counts[0]),
    `batch ${k} is stored in part: ${counts}`,
  );
  return counts[0] ?? 0;
};

/** What the figures count. */
export interface Tally {
  faults: number;
  /** Trials per fault point. */
  points: Record<string, number>;
  outcomes: Record<string, number>;
  resolved: Record<string, number>;
  refusedAfter: number;
  defects: number;
  lost: number;
  duplicated: number;
}

export const newTally = (): Tally => ({
  faults: 0,
  points: {},
  outcomes: {},
  resolved: {},
  refusedAfter: 0,
  defects: 0,
  lost: 0,
  duplicated: 0,
});

export const bump = (record: Record<string, number>, key: string) => {
  record[key] = (record[key] ?? 0) + 1;
};

/**
 * Counts one faulted run in `tally`: the faults it fired and its outcome.
 * A defect is counted and fails the test, naming the fault point `at` and
 * the cause.
 *
 * @returns The outcome's kind (`kindOf`).
 */
export const tallyRun = (
  tally: Tally,
  fired: number,
  result: Exit.Exit<unknown, unknown>,
  at: string,
): string => {
  tally.faults += fired;
  const kind = kindOf(result);
  bump(tally.outcomes, kind);
  if (kind === "defect") {
    tally.defects++;
    assert.fail(
      `${at}: ${kind}: ${Exit.isFailure(result) && Cause.pretty(result.cause)}`,
    );
  }
  return kind;
};

/** The kind of an outcome: success, a failure's tag, or `defect`. */
export const kindOf = (exit: Exit.Exit<unknown, unknown>): string => {
  if (Exit.isSuccess(exit)) return "success";
  if (Cause.hasDies(exit.cause) || Cause.hasInterrupts(exit.cause)) {
    return "defect";
  }
  const failure = exit.cause.reasons.find((r) => r._tag === "Fail");
  const error = failure?._tag === "Fail" ? failure.error : undefined;
  return typeof error === "object" && error !== null && "_tag" in error
    ? String(error._tag)
    : "untagged";
};

export const unknownOf = (
  exit: Exit.Exit<unknown, unknown>,
): AppendOutcomeUnknown => {
  const error = failureOf(exit);
  assert.ok(error instanceof AppendOutcomeUnknown);
  return error;
};

export const printTally = (title: string, tally: Tally) =>
  console.log(
    `${title}: ${
      Object.keys(tally.points).length === 0
        ? ""
        : `${Object.keys(tally.points).length} points, ${
          Math.min(...Object.values(tally.points))
        } or more trials each; `
    }faults injected ${tally.faults}; outcomes ${
      JSON.stringify(tally.outcomes)
    }; unknown resolved ${JSON.stringify(tally.resolved)}; ` +
      `later writes refused ${tally.refusedAfter}; defects ${tally.defects}, ` +
      `lost ${tally.lost}, duplicated ${tally.duplicated}`,
  );

/**
 * Runs `f` with a store over the relay (polling every 50 ms, writers dead
 * after 3 s, then `options`), and the relay.
 */
export const withProxiedStore = async (
  url: string,
  f: (store: PostgresSessionStore, proxy: FaultProxy) => Promise<void>,
  options?: Partial<PostgresStoreOptions>,
) => {
  const proxy = startFaultProxy(url);
  const scope = Effect.runSync(Scope.make());
  try {
    const store = await Effect.runPromise(
      Scope.provide(
        makePostgresStore({
          url: proxy.url,
          pollInterval: "50 millis",
          deadWriterSeconds: 3,
          ...options,
        }),
        scope,
      ),
    );
    await f(store, proxy);
  } finally {
    await Effect.runPromise(Scope.close(scope, Exit.void));
    await proxy.close();
    await closeDirect(url);
  }
};

/**
 * Opens `id` for writing, waiting (up to 15 s) while a cut writer's server
 * process still holds the claim: a stalled one ends only once its held
 * message is delivered and answered.
 */
export const openWriter = (
  store: PostgresSessionStore,
  id: string,
): Effect.Effect<SessionHandle, unknown, Scope.Scope> =>
  store.open(id, { mode: "write" }).pipe(
    Effect.retry({
      schedule: Schedule.spaced("50 millis"),
      times: 300,
      while: (error) => error._tag === "SessionLocked",
    }),
  );

/** Runs a scoped effect. */
export const run = <A, E>(effect: Effect.Effect<A, E, Scope.Scope>) =>
  Effect.runPromise(Effect.scoped(effect));
