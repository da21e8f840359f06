/**
 * The error of a failed file-system call, shared by every module that
 * touches files (the reader's file source, the durable file, the file store,
 * migrations, the importers and the viewer). Messages are for people;
 * callers narrow on `_tag` and fields.
 *
 * @module
 */
import * as Data from "effect/Data";
import { quote } from "../quote.ts";

/** A file-system call failed. */
export class JsonlIoError extends Data.Error<{
  /** What was being done (`open`, `read`, `write`, `fsync`, ...). */
  readonly operation: string;
  /** The path involved. */
  readonly path: string;
  /**
   * The system error code, when there is one (`ENOENT`, `ENOSPC`, ...);
   * `NotCapable` when Deno refused the call for a missing permission.
   */
  readonly code: string | undefined;
  /** The thrown value. */
  readonly cause: unknown;
  /**
   * The runtime permission whose absence made the runtime refuse the call
   * (Deno's `--allow-read`, `--allow-write`, ...), when that is the reason.
   */
  readonly permission?: string | undefined;
}> {
  /** The tag. */
  readonly _tag: "JsonlIoError" = "JsonlIoError";
  /** A sentence for people. */
  override readonly message: string = this.permission === undefined
    ? `Could not ${this.operation} ${quote(this.path)}${
      this.code === undefined ? "" : ` (${this.code})`
    }; check the path and permissions`
    : `Could not ${this.operation} ${
      quote(this.path)
    }: the runtime refused it without ${this.permission}; run again with ${this.permission}`;
}
