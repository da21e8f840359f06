/**
 * The tagged errors of a session store, whatever holds the sessions: they
 * name a session, never a file or a table. What is particular to one store
 * (a path, a system error code, a SQL state) travels in
 * {@link StorageError}'s fields.
 *
 * Messages are for people; callers narrow on `_tag` and fields.
 *
 * @module
 */
import type { SessionEvent } from "../core/event.ts";
import type { SessionHeader } from "../session/session.ts";
import { quote } from "../core/quote.ts";
import {
  type TaggedErrorBases,
  taggedErrorBases,
} from "../core/tagged_error.ts";

// The tags, each once; every class below extends the base of its tag.
const Tagged: TaggedErrorBases<
  | "InvalidSessionId"
  | "SessionAlreadyExists"
  | "SessionNotFound"
  | "SessionLocked"
  | "ReadOnlyHandle"
  | "HandleClosed"
  | "StorageError"
  | "AppendOutcomeUnknown"
  | "WriterClaimLost"
  | "StoredLogDiffers"
  | "NotAnAppend"
  | "InvalidListQuery"
> = taggedErrorBases();

/** Why a session id is refused. */
export type SessionIdProblem = "empty" | "not-well-formed" | "too-long";

/** A session id is refused by the store. */
export class InvalidSessionId extends Tagged.InvalidSessionId<{
  /** The id. */
  readonly id: string;
  /** What is wrong. */
  readonly problem: SessionIdProblem;
}> {
  /** A sentence for people. */
  override readonly message: string = {
    "empty": "Expected a non-empty session id",
    "not-well-formed": `Expected the session id ${
      quote(this.id)
    } to be well-formed Unicode (no lone surrogates)`,
    "too-long": `Expected the session id ${
      quote(this.id)
    } to be at most 200 bytes once encoded; use a shorter id`,
  }[this.problem];
}

/** `create` found a session with the same id. */
export class SessionAlreadyExists extends Tagged.SessionAlreadyExists<{
  /** The id. */
  readonly id: string;
}> {
  /** A sentence for people. */
  override readonly message: string = `A session ${
    quote(this.id)
  } already exists; open it instead of creating it`;
}

/** No session has this id. */
export class SessionNotFound extends Tagged.SessionNotFound<{
  /** The id. */
  readonly id: string;
}> {
  /** A sentence for people. */
  override readonly message: string = `No session ${
    quote(this.id)
  } in the store; create it first`;
}

/** Another writer holds the session (its writer claim is live). */
export class SessionLocked extends Tagged.SessionLocked<{
  /** The id. */
  readonly id: string;
  /**
   * The holder's process id, when recorded (JSONL: in the lock file;
   * PostgreSQL: in the lease, the writer process on its machine).
   */
  readonly pid: number | undefined;
  /** PostgreSQL: the holder's program, as its lease records it. */
  readonly application?: string | undefined;
  /**
   * PostgreSQL: the holder's host name, when its lease records it (a
   * writer without the permission to read it records none).
   */
  readonly client?: string | undefined;
  /**
   * PostgreSQL: when the holder's lease runs out (epoch ms, server time)
   * unless it renews it; a writer that died holds the session until then.
   */
  readonly leaseUntil?: number | undefined;
  /**
   * `"unknown"` when this process could not tell whether the holder is
   * alive (see `reason` and `permission`); absent or `"live"` when it is.
   */
  readonly liveness?: "live" | "unknown" | undefined;
  /** Why the holder's liveness is unknown, for people. */
  readonly reason?: string | undefined;
  /**
   * The runtime permission that would have let this process tell
   * (Deno's `--allow-run`), when its absence is the reason.
   */
  readonly permission?: string | undefined;
}> {
  /** A sentence for people. */
  override readonly message: string = this.liveness === "unknown"
    ? `Session ${quote(this.id)} is claimed for writing by ${
      holderOf(this)
    }, and this process could not tell whether that process is alive${
      this.reason === undefined ? "" : ` (${this.reason})`
    }; ${
      this.permission === undefined
        ? "close that writer, or remove its claim by hand if it is dead"
        : `run again with ${this.permission} so that a dead writer's claim can be reclaimed`
    }`
    : `Session ${quote(this.id)} is open for writing by ${holderOf(this)}${
      this.leaseUntil === undefined
        ? ""
        : `, whose lease runs until ${
          new Date(this.leaseUntil).toISOString()
        } unless renewed`
    }; close that writer or open for reading`;
}

/** Who holds a claim, for a {@link SessionLocked} message. */
const holderOf = (
  locked: {
    readonly pid: number | undefined;
    readonly application?: string | undefined;
    readonly client?: string | undefined;
  },
): string => {
  const { pid, application, client } = locked;
  if (application === undefined && client === undefined) {
    return pid === undefined ? "another writer" : `process ${quote(pid)}`;
  }
  const named = [
    application === undefined ? [] : [`application ${quote(application)}`],
    client === undefined ? [] : [`host ${quote(client)}`],
  ].flat().join(", ");
  return `${
    pid === undefined ? "a writer" : `process ${quote(pid)}`
  } (${named})`;
};

/** A write operation on a handle opened for reading. */
export class ReadOnlyHandle extends Tagged.ReadOnlyHandle<{
  /** The id. */
  readonly id: string;
}> {
  /** A sentence for people. */
  override readonly message: string = `Session ${
    quote(this.id)
  } was opened for reading; open it with mode "write" to append`;
}

/** An operation on a closed handle. */
export class HandleClosed extends Tagged.HandleClosed<{
  /** The id. */
  readonly id: string;
}> {
  /** A sentence for people. */
  override readonly message: string = `The handle of session ${
    quote(this.id)
  } is closed; open the session again`;
}

/**
 * The storage under a store failed: a file call, a connection, a query. The
 * operation did not happen, except where its own error says the outcome is
 * unknown ({@link AppendOutcomeUnknown}).
 */
export class StorageError extends Tagged.StorageError<{
  /** What the store was doing (`create`, `open`, `append`, `list`, ...). */
  readonly operation: string;
  /** The session, when the operation concerns one. */
  readonly id: string | undefined;
  /** The storage's own code, when it has one (`ENOSPC`, a SQL state, ...). */
  readonly code: string | undefined;
  /** The storage's own error (for JSONL a `FileIoError` with the path). */
  readonly cause: unknown;
  /**
   * The runtime permission whose absence made the runtime refuse the call
   * (Deno's `--allow-read`, `--allow-write`, ...), when that is the reason.
   */
  readonly permission?: string | undefined;
}> {
  /** A sentence for people. */
  override readonly message: string = `The store could not ${this.operation}${
    this.id === undefined ? "" : ` session ${quote(this.id)}`
  }${
    this.permission === undefined
      ? `${
        this.code === undefined ? "" : ` (${this.code})`
      }; check the storage and retry`
      : `: the runtime refused it without ${this.permission}; run again with ${this.permission}`
  }`;
}

/**
 * A batch's write failed in a way that leaves its outcome open: the batch
 * may be stored in full, not at all, or (JSONL, whose undo failed) in part.
 * JSONL raises it when a failed write cannot be truncated back; PostgreSQL
 * when the connection broke after `COMMIT` was sent and the store could not
 * find out itself whether the transaction committed. The handle refuses
 * further writes. The error carries what identifies the batch (its first
 * seq, its events, and for a `create` the session's header), so
 * `store.resolveAppend(error)` can tell whether it is stored: retry only
 * when it answers `"absent"`.
 */
export class AppendOutcomeUnknown extends Tagged.AppendOutcomeUnknown<{
  /** The session. */
  readonly id: string;
  /** The seq of the batch's first event. */
  readonly fromSeq: number;
  /** How many events the batch had. */
  readonly events: number;
  /** The batch's events as they would be stored (seqs and times set). */
  readonly batch: ReadonlyArray<SessionEvent>;
  /** The session's header when the write was a `create`, else `undefined`. */
  readonly header: SessionHeader | undefined;
  /** The error of the write that failed. */
  readonly cause: unknown;
  /** The error of what was to settle the outcome (the undo, or the check). */
  readonly undo: unknown;
  /**
   * PostgreSQL: the fencing token of the failed writer's lease, which
   * `resolveAppend` revokes (once no write is in flight) so that a late
   * copy of the write can never commit.
   */
  readonly writerToken?: string | undefined;
  /** Why the outcome is still unknown, for people. */
  readonly reason?: string | undefined;
}> {
  /** A sentence for people. */
  override readonly message: string = `The batch of ${
    quote(this.events)
  } events from seq ${quote(this.fromSeq)} of session ${
    quote(this.id)
  } may or may not be stored${
    this.reason === undefined ? "" : ` (${this.reason})`
  }; call store.resolveAppend with this error before writing it again`;
}

/**
 * The write handle lost the session's writer claim (PostgreSQL: another
 * writer took its lease over, or the outcome of a write of its could not be
 * told), so nothing more is written through it:
 * another writer may hold the session now. The write that failed with this
 * error stored nothing; open the session again to go on.
 */
export class WriterClaimLost extends Tagged.WriterClaimLost<{
  /** The session. */
  readonly id: string;
  /** The storage's error that showed the claim gone. */
  readonly cause: unknown;
}> {
  /** A sentence for people. */
  override readonly message: string = `The writer of session ${
    quote(this.id)
  } lost its claim (its lease was taken over, or its connection broke); open the session again to write`;
}

/** What differs between a stored log and a batch of unknown outcome. */
export type StoredLogDifference =
  /** The stored header is not the header of the created session. */
  | "header"
  /** Another event is stored at `seq`. */
  | "event"
  /** The log holds the batch up to `seq` and ends there (part of it). */
  | "part"
  /** The log ends at `seq`, before the batch's first seq. */
  | "shorter";

/**
 * `resolveAppend` found the stored log neither holding the whole batch nor
 * ending where the batch starts: something else is stored at `seq`, or only
 * part of the batch. Retrying the batch would not give the log it meant to;
 * read the session and decide.
 */
export class StoredLogDiffers extends Tagged.StoredLogDiffers<{
  /** The session. */
  readonly id: string;
  /** The seq of the batch's first event. */
  readonly fromSeq: number;
  /** The first seq where the log and the batch part ways. */
  readonly seq: number;
  /** How they differ. */
  readonly difference: StoredLogDifference;
}> {
  /** A sentence for people. */
  override readonly message: string = `Session ${
    quote(this.id)
  } does not hold the batch from seq ${quote(this.fromSeq)}: ${
    {
      header: "another session with this id is stored",
      event: `another event is stored at seq ${quote(this.seq)}`,
      part: `only the events before seq ${quote(this.seq)} are stored`,
      shorter: `the log ends at seq ${quote(this.seq)}, before the batch`,
    }[this.difference]
  }; open the session and check what it holds before writing again`;
}

/**
 * `update` was given an operation whose result does not extend the handle's
 * session (another header, or a log that does not start with the handle's
 * events): it is not an append, so nothing was written.
 */
export class NotAnAppend extends Tagged.NotAnAppend<{
  /** The session. */
  readonly id: string;
  /** What differs: the header, or the log before the handle's next seq. */
  readonly problem: "header" | "log";
}> {
  /** A sentence for people. */
  override readonly message: string =
    `The operation's result does not extend session ${
      quote(this.id)
    } (its ${this.problem} differs); use store.create to persist a new session such as a fork`;
}

/** A `store.list` query the store refuses: a bad limit, a foreign cursor. */
export class InvalidListQuery extends Tagged.InvalidListQuery<{
  /** The field refused: `limit` or `cursor`. */
  readonly field: "limit" | "cursor";
  /** The value given, as text. */
  readonly value: string;
}> {
  /** A sentence for people. */
  override readonly message: string = this.field === "limit"
    ? `Expected the list limit to be an integer from 1 to 1000 but found ${this.value}`
    : `Expected a cursor given by a previous page of this store but found ${
      quote(this.value)
    }`;
}
