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
import * as Data from "effect/Data";
import { quote } from "../quote.ts";

/** Why a session id is refused. */
export type SessionIdProblem = "empty" | "not-well-formed" | "too-long";

/** A session id is refused by the store. */
export class InvalidSessionId extends Data.Error<{
  /** The id. */
  readonly id: string;
  /** What is wrong. */
  readonly problem: SessionIdProblem;
}> {
  /** The tag. */
  readonly _tag: "InvalidSessionId" = "InvalidSessionId";
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
export class SessionAlreadyExists extends Data.Error<{
  /** The id. */
  readonly id: string;
}> {
  /** The tag. */
  readonly _tag: "SessionAlreadyExists" = "SessionAlreadyExists";
  /** A sentence for people. */
  override readonly message: string = `A session ${
    quote(this.id)
  } already exists; open it instead of creating it`;
}

/** No session has this id. */
export class SessionNotFound extends Data.Error<{
  /** The id. */
  readonly id: string;
}> {
  /** The tag. */
  readonly _tag: "SessionNotFound" = "SessionNotFound";
  /** A sentence for people. */
  override readonly message: string = `No session ${
    quote(this.id)
  } in the store; create it first`;
}

/** Another writer holds the session (its writer claim is live). */
export class SessionLocked extends Data.Error<{
  /** The id. */
  readonly id: string;
  /** The pid recorded in the lock, when readable. */
  readonly pid: number | undefined;
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
  /** The tag. */
  readonly _tag: "SessionLocked" = "SessionLocked";
  /** A sentence for people. */
  override readonly message: string = this.liveness === "unknown"
    ? `Session ${quote(this.id)} is claimed for writing by process ${
      quote(this.pid)
    }, and this process could not tell whether that process is alive${
      this.reason === undefined ? "" : ` (${this.reason})`
    }; ${
      this.permission === undefined
        ? "close that writer, or remove its claim by hand if it is dead"
        : `run again with ${this.permission} so that a dead writer's claim can be reclaimed`
    }`
    : `Session ${quote(this.id)} is open for writing by process ${
      quote(this.pid)
    }; close that writer or open for reading`;
}

/** A write operation on a handle opened for reading. */
export class ReadOnlyHandle extends Data.Error<{
  /** The id. */
  readonly id: string;
}> {
  /** The tag. */
  readonly _tag: "ReadOnlyHandle" = "ReadOnlyHandle";
  /** A sentence for people. */
  override readonly message: string = `Session ${
    quote(this.id)
  } was opened for reading; open it with mode "write" to append`;
}

/** An operation on a closed handle. */
export class HandleClosed extends Data.Error<{
  /** The id. */
  readonly id: string;
}> {
  /** The tag. */
  readonly _tag: "HandleClosed" = "HandleClosed";
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
export class StorageError extends Data.Error<{
  /** What the store was doing (`create`, `open`, `append`, `list`, ...). */
  readonly operation: string;
  /** The session, when the operation concerns one. */
  readonly id: string | undefined;
  /** The storage's own code, when it has one (`ENOSPC`, a SQL state, ...). */
  readonly code: string | undefined;
  /** The storage's own error (for JSONL a `JsonlIoError` with the path). */
  readonly cause: unknown;
  /**
   * The runtime permission whose absence made the runtime refuse the call
   * (Deno's `--allow-read`, `--allow-write`, ...), when that is the reason.
   */
  readonly permission?: string | undefined;
}> {
  /** The tag. */
  readonly _tag: "StorageError" = "StorageError";
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
 * A batch's write failed and undoing it failed too: the batch may be stored
 * in part, in full or not at all. The handle refuses further writes
 * (`HandleClosed`); open the session again to see what it holds.
 */
export class AppendOutcomeUnknown extends Data.Error<{
  /** The session. */
  readonly id: string;
  /** The seq of the batch's first event. */
  readonly fromSeq: number;
  /** How many events the batch had. */
  readonly events: number;
  /** The error of the write that failed. */
  readonly cause: unknown;
  /** The error of the undo that failed. */
  readonly undo: unknown;
}> {
  /** The tag. */
  readonly _tag: "AppendOutcomeUnknown" = "AppendOutcomeUnknown";
  /** A sentence for people. */
  override readonly message: string = `The batch of ${
    quote(this.events)
  } events from seq ${quote(this.fromSeq)} of session ${
    quote(this.id)
  } may or may not be stored; open the session again to see what it holds`;
}

/**
 * `update` was given an operation whose result does not extend the handle's
 * session (another header, or a log that does not start with the handle's
 * events): it is not an append, so nothing was written.
 */
export class NotAnAppend extends Data.Error<{
  /** The session. */
  readonly id: string;
  /** What differs: the header, or the log before the handle's next seq. */
  readonly problem: "header" | "log";
}> {
  /** The tag. */
  readonly _tag: "NotAnAppend" = "NotAnAppend";
  /** A sentence for people. */
  override readonly message: string =
    `The operation's result does not extend session ${
      quote(this.id)
    } (its ${this.problem} differs); use store.create to persist a new session such as a fork`;
}
