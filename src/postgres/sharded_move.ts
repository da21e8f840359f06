/**
 * Moving sessions between the servers of a sharded PostgreSQL store:
 * {@link moveSessionBetween} (one session, under its writer claim),
 * {@link removeStaleCopies} (the copies a stopped move left) and
 * {@link rebalanceShards} (every session to its own server).
 *
 * A move holds the session's writer claim on its source for the whole
 * move, copies the log through the target's `create` (which stores the
 * header and every event at once, or nothing) and keeps the target's claim
 * too, writes a checkpoint on the target when the source had one, compares
 * the stored lines of both servers (a digest computed by each server), and
 * only then deletes the source's head row (its events and checkpoint go
 * with it), on the condition that its `next_seq` is still the one copied.
 *
 * A move stopped at any step (a crash, a cut connection) leaves the
 * session whole on the source, or whole on both servers with the same
 * lines. Every router sends reads and writes to the first holder in the
 * session's ranking, so readers and writers keep agreeing on one copy;
 * {@link removeStaleCopies} (which {@link rebalanceShards} runs, and which a
 * second move of the session does on its own) deletes the other copy
 * once it has checked, holding both copies' claims, that it is a prefix
 * of the one kept.
 *
 * @module
 * @internal
 */
import * as Data from "effect/Data";
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import type * as Scope from "effect/Scope";
import type { Vocabulary } from "../core/decode.ts";
import { quote } from "../core/quote.ts";
import { SessionNotFound, type StorageError } from "../store/errors.ts";
import type {
  CreateError,
  OpenError,
  SessionHandle,
  WriteError,
} from "../store/store.ts";
import { CHECKPOINTS_TABLE, EVENTS_TABLE, SESSIONS_TABLE } from "./schema.ts";
import {
  holdersOf,
  homeShard,
  locateShard,
  type Shard,
  type Shards,
} from "./sharded_route.ts";

/** Why a move did not happen. */
export type MoveProblem =
  /** `to` or `from` names no server of the store. */
  | "unknown-server"
  /** The target holds a session of the same id with other lines. */
  | "target-differs"
  /** The copy's lines, once stored, were not the source's. */
  | "copy-differs"
  /** The source's head row was not there to delete. */
  | "source-changed";

/** A session could not be moved between two servers of a sharded store. */
export class SessionMoveFailed extends Data.Error<{
  /** The session id. */
  readonly id: string;
  /** The server it was on (or was named as on). */
  readonly from: string | undefined;
  /** The server it was to go to. */
  readonly to: string;
  /** What went wrong. */
  readonly problem: MoveProblem;
}> {
  /** The tag. */
  readonly _tag: "SessionMoveFailed" = "SessionMoveFailed";
  /** A sentence for people. */
  override readonly message: string = `Could not move session ${
    quote(this.id)
  } from ${quote(this.from ?? "?")} to ${quote(this.to)}: ${
    {
      "unknown-server": "no server of the store has that name; check its list",
      "target-differs":
        "the target holds another log of that id; compare and remove one by hand",
      "copy-differs":
        "the copy's lines differ from the source's; the copy was removed, retry",
      "source-changed":
        "the source's head row was gone before its removal; check both servers",
    }[this.problem]
  }`;
}

/** Options of a move. */
export interface MoveSessionOptions {
  /** The server the session is on; found by the session's ranking by default. */
  readonly from?: string;
  /** Extra log-only types the session's events may have. */
  readonly vocabulary?: Vocabulary;
}

/** What a move did. */
export interface MovedSession {
  /** The session id. */
  readonly id: string;
  /** The server it was on. */
  readonly from: string;
  /** The server it is on now. */
  readonly to: string;
  /** The events moved (its next seq); 0 when it was already on `to`. */
  readonly events: number;
}

/** Errors of a move. */
export type MoveError =
  | OpenError
  | CreateError
  | WriteError
  | SessionMoveFailed;

/** What a server stores of a session, up to a seq: enough to compare two copies. */
interface Digest {
  /** The header line. */
  readonly header: string;
  /** The head row's next seq. */
  readonly nextSeq: number;
  /** The event rows below the bound. */
  readonly rows: number;
  /** The md5 of the rows' md5s in seq order, below the bound. */
  readonly lines: string;
  /** Whether the session has a checkpoint row. */
  readonly checkpointed: boolean;
}

/**
 * What `shard` stores of session `id` below seq `upTo` (its whole log when
 * undefined), computed by the server: one row comes back, whatever the
 * log's length.
 */
const digestOf = (
  shard: Shard,
  id: string,
  upTo: number | undefined,
): Effect.Effect<Digest | undefined, StorageError> =>
  Effect.map(
    Effect.flatMap(shard.admin, (admin) =>
      admin.unsafe<{
        header: string;
        next_seq: bigint | number;
        rows: bigint | number;
        lines: string | null;
        checkpointed: boolean;
      }>(
        `SELECT s.header, s.next_seq,
         (SELECT count(*) FROM ${EVENTS_TABLE} e
           WHERE e.session_id = s.id AND e.seq < coalesce($2, s.next_seq)) AS rows,
         (SELECT md5(string_agg(md5(e.line), '' ORDER BY e.seq)) FROM ${EVENTS_TABLE} e
           WHERE e.session_id = s.id AND e.seq < coalesce($2, s.next_seq)) AS lines,
         EXISTS (SELECT 1 FROM ${CHECKPOINTS_TABLE} c WHERE c.session_id = s.id) AS checkpointed
       FROM ${SESSIONS_TABLE} s WHERE s.id = $1`,
        [id, upTo ?? null],
      ).pipe(Effect.mapError(shard.failed("compare the copy of", id)))),
    (rows): Digest | undefined => {
      const row = rows[0];
      return row === undefined ? undefined : {
        header: row.header,
        nextSeq: Number(row.next_seq),
        rows: Number(row.rows),
        lines: row.lines ?? "",
        checkpointed: row.checkpointed,
      };
    },
  );

/** Whether two digests hold the same lines under the same header. */
const sameLines = (a: Digest | undefined, b: Digest | undefined): boolean =>
  a !== undefined && b !== undefined && a.header === b.header &&
  a.rows === b.rows && a.lines === b.lines;

/**
 * Deletes session `id` from `shard` if its head row's next seq is still
 * `nextSeq` (its events and checkpoint go with it); whether it did.
 */
const removeCopy = (
  shard: Shard,
  id: string,
  nextSeq: number,
): Effect.Effect<boolean, StorageError> =>
  Effect.map(
    Effect.flatMap(shard.admin, (admin) =>
      admin.unsafe<{ id: string }>(
        `DELETE FROM ${SESSIONS_TABLE} WHERE id = $1 AND next_seq = $2 RETURNING id`,
        [id, nextSeq],
      ).pipe(Effect.mapError(shard.failed("remove the moved copy of", id)))),
    (rows) => rows.length === 1,
  );

const shardNamed = (
  shards: Shards,
  name: string,
  id: string,
  from: string | undefined,
  to: string,
): Effect.Effect<Shard, SessionMoveFailed> => {
  const shard = shards.byName.get(name);
  return shard === undefined
    ? Effect.fail(
      new SessionMoveFailed({ id, from, to, problem: "unknown-server" }),
    )
    : Effect.succeed(shard);
};

/** What a move has in hand once both claims are held. */
interface MoveState {
  readonly id: string;
  readonly source: Shard;
  readonly target: Shard;
  /** The source's write handle: its claim. */
  readonly held: SessionHandle;
  /** The target's write handle on the copy: its claim. */
  readonly copy: SessionHandle;
  /** What the source stores. */
  readonly stored: Digest;
}

const failure = (
  state: Pick<MoveState, "id" | "source" | "target">,
  problem: MoveProblem,
): SessionMoveFailed =>
  new SessionMoveFailed({
    id: state.id,
    from: state.source.name,
    to: state.target.name,
    problem,
  });

/**
 * The step that stores the copy: the target's `create` with the source's
 * whole session, or, when the target already holds the session (a move
 * that stopped after its copy), a write handle on that copy if its lines
 * are the source's.
 */
const storeCopy = (
  state: Omit<MoveState, "copy">,
  vocabulary: Vocabulary | undefined,
): Effect.Effect<SessionHandle, MoveError, Scope.Scope> =>
  Effect.gen(function* () {
    const { id, target, held } = state;
    const created = yield* Effect.result(
      target.store.create(
        held.session,
        vocabulary === undefined ? undefined : { vocabulary },
      ),
    );
    if (Result.isSuccess(created)) return created.success;
    if (created.failure._tag !== "SessionAlreadyExists") {
      return yield* created.failure;
    }
    const copy = yield* target.store.open(id, {
      mode: "write",
      ...(vocabulary === undefined ? {} : { vocabulary }),
    });
    const there = yield* digestOf(target, id, undefined);
    if (!sameLines(there, state.stored)) {
      return yield* failure(state, "target-differs");
    }
    return copy;
  });

/**
 * The checks after the copy: a checkpoint when the source had one, the
 * copy's lines against the source's (a copy that differs is removed, under
 * its claim), then the source's removal under its claim.
 */
const verifyAndRemoveSource = (
  state: MoveState,
): Effect.Effect<void, MoveError> =>
  Effect.gen(function* () {
    const { id, source, target, copy, stored } = state;
    if (stored.checkpointed) yield* target.store.checkpoint(copy);
    const copied = yield* digestOf(target, id, undefined);
    if (!sameLines(copied, stored) || copied?.nextSeq !== stored.nextSeq) {
      yield* removeCopy(target, id, copied?.nextSeq ?? stored.nextSeq);
      return yield* failure(state, "copy-differs");
    }
    if (!(yield* removeCopy(source, id, stored.nextSeq))) {
      return yield* failure(state, "source-changed");
    }
  });

/**
 * Moves session `id` to server `to`, under its writer claim on both
 * servers; see the module doc for the steps and what a stopped move
 * leaves. A session already on `to` is left as it is (`events` 0).
 *
 * @param shards The servers.
 * @param id The session id.
 * @param to The target server's name.
 * @param options The source server, the vocabulary.
 * @returns What was moved.
 */
export const moveSessionBetween = (
  shards: Shards,
  id: string,
  to: string,
  options: MoveSessionOptions = {},
): Effect.Effect<MovedSession, MoveError> =>
  Effect.scoped(Effect.gen(function* () {
    const from = options.from;
    const target = yield* shardNamed(shards, to, id, from, to);
    const source = from === undefined
      ? yield* locateShard(shards, id)
      : yield* shardNamed(shards, from, id, from, to);
    if (source === undefined) return yield* new SessionNotFound({ id });
    if (source === target) return { id, from: to, to, events: 0 };
    const vocabulary = options.vocabulary;
    const held = yield* source.store.open(id, {
      mode: "write",
      wholeLog: true,
      ...(vocabulary === undefined ? {} : { vocabulary }),
    });
    const stored = yield* digestOf(source, id, undefined);
    if (stored === undefined) {
      return yield* failure({ id, source, target }, "source-changed");
    }
    const partial = { id, source, target, held, stored };
    const copy = yield* storeCopy(partial, vocabulary);
    yield* verifyAndRemoveSource({ ...partial, copy });
    return { id, from: source.name, to, events: stored.nextSeq };
  }));

/** What {@link removeStaleCopies} did with one session. */
export interface CopiesRemoved {
  /** The server of the copy kept: the first holder in the ranking. */
  readonly kept: string;
  /** The servers whose copy was removed. */
  readonly removed: ReadonlyArray<string>;
  /** The servers whose copy is not a prefix of the kept one (left alone). */
  readonly conflicting: ReadonlyArray<string>;
}

/**
 * Removes the copies of session `id` that a stopped move left on servers
 * ranked after the first holder, each only once, holding the writer claims
 * of both, it is found to be a prefix of the copy kept (the same header,
 * the same lines up to its own end).
 *
 * @param shards The servers.
 * @param id The session id.
 * @param vocabulary Extra log-only types the session's events may have.
 * @returns What was kept and removed; undefined when no server holds it.
 */
export const removeStaleCopies = (
  shards: Shards,
  id: string,
  vocabulary?: Vocabulary,
): Effect.Effect<CopiesRemoved | undefined, MoveError> =>
  Effect.scoped(Effect.gen(function* () {
    const [kept, ...others] = yield* holdersOf(shards, id);
    if (kept === undefined) return undefined;
    const removed: string[] = [];
    const conflicting: string[] = [];
    if (others.length === 0) return { kept: kept.name, removed, conflicting };
    const open = {
      mode: "write",
      ...(vocabulary === undefined ? {} : { vocabulary }),
    } as const;
    yield* kept.store.open(id, open);
    for (const other of others) {
      yield* other.store.open(id, open);
      const stale = yield* digestOf(other, id, undefined);
      const prefix = stale === undefined
        ? undefined
        : yield* digestOf(kept, id, stale.nextSeq);
      if (
        stale !== undefined && sameLines(stale, prefix) &&
        (yield* removeCopy(other, id, stale.nextSeq))
      ) removed.push(other.name);
      else conflicting.push(other.name);
    }
    return { kept: kept.name, removed, conflicting };
  }));

/** Options of a rebalance. */
export interface RebalanceOptions {
  /** Sessions moved at once; 4 by default. */
  readonly concurrency?: number;
  /** Extra log-only types the sessions' events may have. */
  readonly vocabulary?: Vocabulary;
}

/** What a rebalance did. */
export interface RebalanceReport {
  /** The sessions seen, over every server. */
  readonly sessions: number;
  /** The sessions moved to their own server. */
  readonly moved: ReadonlyArray<MovedSession>;
  /** Stale copies removed (a stopped move's), by session id. */
  readonly copiesRemoved: ReadonlyArray<{
    readonly id: string;
    readonly servers: ReadonlyArray<string>;
  }>;
  /**
   * Sessions left where they are, and why: `SessionLocked` (a writer holds
   * it: run the rebalance again later), a conflicting copy, a failed
   * server.
   */
  readonly skipped: ReadonlyArray<{
    readonly id: string;
    readonly error: MoveError;
  }>;
}

/**
 * Moves every session that is not on its own server there, after removing
 * the stale copies a stopped move left. A session whose writer is live is
 * skipped (`SessionLocked` in `skipped`); run it again later.
 *
 * @param shards The servers.
 * @param options How many at once, the vocabulary.
 * @returns What moved and what did not.
 */
export const rebalanceShards = (
  shards: Shards,
  options: RebalanceOptions = {},
): Effect.Effect<RebalanceReport, StorageError> =>
  Effect.gen(function* () {
    const listed = yield* Effect.forEach(
      [...shards.byName.values()],
      (shard) =>
        Effect.map(
          shard.store.list(),
          (ids) => ids.map((id) => ({ id, on: shard.name })),
        ),
      { concurrency: "unbounded" },
    );
    const where = new Map<string, string[]>();
    for (const { id, on } of listed.flat()) {
      where.set(id, [...(where.get(id) ?? []), on]);
    }
    const moved: MovedSession[] = [];
    const copiesRemoved: Array<{ id: string; servers: string[] }> = [];
    const skipped: Array<{ id: string; error: MoveError }> = [];
    const vocabulary = options.vocabulary;
    yield* Effect.forEach(
      [...where],
      ([id, on]) =>
        Effect.gen(function* () {
          if (on.length > 1) {
            const copies = yield* removeStaleCopies(shards, id, vocabulary);
            if (copies !== undefined && copies.removed.length > 0) {
              copiesRemoved.push({ id, servers: [...copies.removed] });
            }
            if (copies !== undefined && copies.conflicting.length > 0) {
              return yield* new SessionMoveFailed({
                id,
                from: copies.conflicting[0],
                to: copies.kept,
                problem: "target-differs",
              });
            }
          }
          const home = homeShard(shards, id).name;
          if (on.length === 1 && on[0] === home) return;
          const done = yield* moveSessionBetween(shards, id, home, {
            ...(vocabulary === undefined ? {} : { vocabulary }),
          });
          if (done.from !== done.to) moved.push(done);
        }).pipe(
          Effect.catch((error) =>
            Effect.sync(() => {
              skipped.push({ id, error });
            })
          ),
        ),
      { concurrency: Math.max(1, options.concurrency ?? 4), discard: true },
    );
    return {
      sessions: where.size,
      moved,
      copiesRemoved,
      skipped,
    };
  });
