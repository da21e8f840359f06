/**
 * The tagged errors of importing another tool's session file. Each names the
 * 1-based line of the source file it is about; I/O fails with the shared
 * `FileIoError` and `TargetExists`.
 * Messages are for people; callers narrow on `_tag` and fields.
 *
 * @module
 */
import { quote } from "../core/quote.ts";
import type { FileIoError, TargetExists } from "../fs/errors.ts";
import { formatHint, formatLabel, type SessionFormat } from "./sniff.ts";
import type { SourceTool } from "./importer.ts";
import {
  type TaggedErrorBases,
  taggedErrorBases,
} from "../core/tagged_error.ts";

// The tags, each once; every class below extends the base of its tag.
const Tagged: TaggedErrorBases<
  | "ImportLineNotJson"
  | "ImportLineTooLong"
  | "ImportNotASession"
  | "ImportVersionUnsupported"
  | "ImportEventRejected"
  | "ImportNoSession"
  | "ImportNotThisFormat"
  | "ImportSessionNotChosen"
> = taggedErrorBases();

/** A source line is not JSON (for example two records glued together). */
export class ImportLineNotJson extends Tagged.ImportLineNotJson<{
  /** The 1-based line. */
  readonly line: number;
  /** The start of the line. */
  readonly excerpt: string;
}> {
  /** A sentence for people. */
  override readonly message: string = `Expected line ${
    quote(this.line)
  } to be one JSON record but it starts ${
    quote(this.excerpt)
  }; pass --recover to skip it`;
}

/** A source line is longer than the reader's bound. */
export class ImportLineTooLong extends Tagged.ImportLineTooLong<{
  /** The 1-based line. */
  readonly line: number;
  /** Its length in bytes (at least the bound). */
  readonly bytes: number;
  /** The bound. */
  readonly limit: number;
}> {
  /** A sentence for people. */
  override readonly message: string = `Expected line ${
    quote(this.line)
  } to hold at most ${quote(this.limit)} bytes; pass --recover to skip it`;
}

/** The file does not start like a session of the named tool. */
export class ImportNotASession extends Tagged.ImportNotASession<{
  /** The tool the file was read as. */
  readonly from: string;
  /** The 1-based line. */
  readonly line: number;
  /** What was expected there. */
  readonly expected: string;
}> {
  /** A sentence for people. */
  override readonly message: string = `Expected line ${quote(this.line)} of a ${
    quote(this.from)
  } session to be ${this.expected}`;
}

/** The file declares a format version this importer does not know. */
export class ImportVersionUnsupported extends Tagged.ImportVersionUnsupported<{
  /** The tool. */
  readonly from: string;
  /** The version the file declares. */
  readonly version: unknown;
  /** The versions this importer reads. */
  readonly supported: ReadonlyArray<number>;
}> {
  /** The header is line 1. */
  readonly line: 1 = 1;
  /** A sentence for people. */
  override readonly message: string = `Expected a ${
    quote(this.from)
  } format version in ${quote(this.supported.join(", "))} but found ${
    quote(this.version)
  }`;
}

/**
 * An event built from a source line broke a v3 rule. The importer builds
 * every event through the library's decoder and fold, so this names the rule
 * (`tag`, an `EventDecodeError` or `SurfaceError` tag) and the source line.
 */
export class ImportEventRejected extends Tagged.ImportEventRejected<{
  /** The 1-based source line the event came from (0: synthesized). */
  readonly line: number;
  /** The seq the event would have had. */
  readonly seq: number;
  /** The tag of the v3 rule. */
  readonly rule: string;
  /** What the rule said. */
  readonly reason: string;
}> {
  /** A sentence for people. */
  override readonly message: string = `Expected line ${
    quote(this.line)
  } to import as a valid event but ${
    quote(this.rule)
  } refused it: ${this.reason}`;
}

/**
 * Under `recover`, nothing in the file was a record of a session of the tool
 * (every line skipped, or none of the kinds the tool writes): never an empty
 * success.
 */
export class ImportNoSession extends Tagged.ImportNoSession<{
  /** The source file. */
  readonly file: string;
  /** The tool the file was read as. */
  readonly from: string;
}> {
  /** A sentence for people. */
  override readonly message: string = `No session found in ${
    quote(this.file)
  }: no line is a record of a ${quote(this.from)} session`;
}

/**
 * No record of the file is of the format it was read as, and the file looks
 * like another known format: the message says which and what to do (the
 * `--from` to use, `opencode export` for opencode's storage).
 */
export class ImportNotThisFormat extends Tagged.ImportNotThisFormat<{
  /** The source file (or folder). */
  readonly file: string;
  /** The tool the file was read as. */
  readonly from: SourceTool;
  /** The format the file looks like. */
  readonly looksLike: SessionFormat;
}> {
  /** What to do, as a clause. */
  readonly hint: string = formatHint(this.looksLike, this.file);
  /** A sentence for people. */
  override readonly message: string = `Expected ${quote(this.file)} to be ${
    formatLabel(this.from)
  }, but nothing in it is one: it looks like ${
    formatLabel(this.looksLike)
  }; ${this.hint}`;
}

/**
 * An opencode database holds several sessions and none was chosen, or none
 * of the id asked for (or none at all): the message lists the ids it holds.
 */
export class ImportSessionNotChosen extends Tagged.ImportSessionNotChosen<{
  /** The database. */
  readonly file: string;
  /** The session id asked for, if one was. */
  readonly requested: string | undefined;
  /** The ids of the sessions the database holds, oldest first. */
  readonly sessions: ReadonlyArray<string>;
}> {
  /** A sentence for people. */
  override readonly message: string = this.sessions.length === 0
    ? `Expected a session in ${quote(this.file)} but it holds none`
    : `${
      this.requested === undefined
        ? `Expected one session in ${
          quote(this.file)
        } but it holds ${this.sessions.length}`
        : `No session ${quote(this.requested)} in ${quote(this.file)}`
    }; choose one with --session: ${this.sessions.map(quote).join(", ")}`;
}

/** Any refusal of an import. */
export type ImportError =
  | ImportLineNotJson
  | ImportLineTooLong
  | ImportNotASession
  | ImportVersionUnsupported
  | ImportEventRejected
  | FileIoError
  | TargetExists
  | ImportNoSession
  | ImportNotThisFormat
  | ImportSessionNotChosen;
