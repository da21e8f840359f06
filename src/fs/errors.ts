/**
 * The errors of the file system, shared by every module that touches files
 * (the reader's file source, the durable file, the file store, migrations,
 * the importers and the viewer): {@link FileIoError} for a failed call and
 * {@link TargetExists} for a new file whose name is taken. Messages are for
 * people; callers narrow on `_tag` and fields.
 *
 * @module
 */
import { quote } from "../core/quote.ts";
import {
  type TaggedErrorBases,
  taggedErrorBases,
} from "../core/tagged_error.ts";

// The tags, each once; every class below extends the base of its tag.
const Tagged: TaggedErrorBases<
  | "FileIoError"
  | "TargetExists"
> = taggedErrorBases();

/** What a thrown value says, for a message: its own message, or itself. */
const causeText = (cause: unknown): string =>
  cause instanceof Error ? cause.message : quote(cause);

/**
 * A file-system call failed.
 *
 * @example Narrowing on the tag
 * ```ts
 * import { FileIoError } from "@palimpsest/session/jsonl";
 * import assert from "node:assert/strict";
 *
 * const error = new FileIoError({
 *   operation: "open",
 *   path: "/no/such/file",
 *   code: "ENOENT",
 *   cause: undefined,
 * });
 * assert.equal(error._tag, "FileIoError");
 * assert.equal(error.message, 'Could not open "/no/such/file" (ENOENT); check the path and its permissions');
 * ```
 */
export class FileIoError extends Tagged.FileIoError<{
  /** What was being done (`open`, `read`, `write`, `fsync`, `link`, ...). */
  readonly operation: string;
  /** The path involved (for a write, the temporary file's). */
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
  /** A sentence for people. */
  override readonly message: string = this.permission !== undefined
    ? `Could not ${this.operation} ${
      quote(this.path)
    }: the runtime refused it without ${this.permission}; run again with ${this.permission}`
    : `Could not ${this.operation} ${quote(this.path)}${
      this.code !== undefined
        ? ` (${this.code})`
        : this.cause === undefined
        ? ""
        : `: ${causeText(this.cause)}`
    }; check the path and its permissions`;
}

/**
 * A new file's name is taken: the file there is left untouched and nothing
 * is written.
 *
 * @example Narrowing on the tag
 * ```ts
 * import { TargetExists } from "@palimpsest/session/jsonl";
 * import assert from "node:assert/strict";
 *
 * const error = new TargetExists({ path: "s.v3.jsonl" });
 * assert.equal(error._tag, "TargetExists");
 * assert.equal(error.message, 'Expected "s.v3.jsonl" not to exist; choose another path');
 * ```
 */
export class TargetExists extends Tagged.TargetExists<{
  /** The path that exists. */
  readonly path: string;
}> {
  /** A sentence for people. */
  override readonly message: string = `Expected ${
    quote(this.path)
  } not to exist; choose another path`;
}
