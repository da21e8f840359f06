/**
 * What a command produces: an exit code, the JSON document for `--json`,
 * and the text for people. The runner picks one and writes it; commands
 * never write to stdout themselves (progress on stderr excepted).
 *
 * @module
 */
import type { CliIo } from "./io.ts";
import type { ParsedArgs } from "./args.ts";
import type { CommandSpec } from "./args.ts";
import * as Effect from "effect/Effect";
import { describeFailure, failureText } from "./failure.ts";

/** The exit codes of the command line. */
export const ExitCode: {
  /** The log is valid, or the command did what it was asked. */
  readonly ok: 0;
  /** The log is invalid, or the operation was refused. */
  readonly invalid: 1;
  /** Usage error, or an I/O error (missing file, existing target, ...). */
  readonly usage: 2;
} = { ok: 0, invalid: 1, usage: 2 };

/** An exit code of the command line. */
export type ExitCode = 0 | 1 | 2;

/** The result of one command. */
export interface Outcome {
  /** The exit code. */
  readonly code: ExitCode;
  /** The document printed with `--json`. */
  readonly json: unknown;
  /** The text printed on stdout without `--json`. */
  readonly text: string;
  /** Text printed on stderr without `--json` (errors, warnings). */
  readonly errText?: string;
}

/** A command: its usage and what it does. */
export interface Command {
  /** Usage, for parsing and `--help`. */
  readonly spec: CommandSpec;
  /** Runs the command; never fails, failures are outcomes. */
  readonly run: (args: ParsedArgs, io: CliIo) => Effect.Effect<Outcome>;
}

/**
 * The outcome of a command that did what it was asked (exit 0):
 * `{"ok": true, ...fields}` and the text for people.
 *
 * @param fields The JSON document's fields after `ok`.
 * @param text The text, or its lines (each ends with a newline).
 * @returns The outcome.
 */
export function okOutcome(
  fields: Readonly<Record<string, unknown>>,
  text: string | ReadonlyArray<string>,
): Outcome {
  return {
    code: ExitCode.ok,
    json: { ok: true, ...fields },
    text: typeof text === "string" ? text : `${text.join("\n")}\n`,
  };
}

/**
 * The outcome of a failure: `{"ok": false, "error": {...}}` and readable text
 * on stderr.
 *
 * @param code The exit code.
 * @param file The file the failure is about.
 * @param error The tagged error.
 * @param extra Fields added to the JSON document before `error`.
 * @param hint The hint of the text, when not the one the error's kind gives.
 * @returns The outcome.
 */
export function failureOutcome(
  code: ExitCode,
  file: string,
  error: unknown,
  extra: Readonly<Record<string, unknown>> = {},
  hint?: string,
): Outcome {
  const report = describeFailure(error);
  return {
    code,
    json: { ok: false, ...extra, error: report },
    text: "",
    errText: failureText(file, error, hint),
  };
}

/**
 * The outcome of a command line that does not say what to do (exit 2): a
 * `UsageError` in the JSON document, and `error: …` with the command's
 * usage line on stderr.
 *
 * @param message The sentence of the JSON document's error.
 * @param usage The command's usage line, if stderr shows it.
 * @param errMessage What stderr says, when it is not `message`.
 * @returns The outcome.
 */
export function usageOutcome(
  message: string,
  usage?: string,
  errMessage: string = message,
): Outcome {
  return {
    code: ExitCode.usage,
    json: { ok: false, error: { tag: "UsageError", message } },
    text: "",
    errText: usage === undefined
      ? `error: ${errMessage}\n`
      : `error: ${errMessage}; usage: ${usage}\n`,
  };
}

/**
 * A non-negative integer of the command line (a seq, a count), or the usage
 * outcome that names what it should have been.
 *
 * @param what What the text was given as: `SEQ`, `--to`.
 * @param text The text.
 * @returns The number, or the usage outcome.
 */
export function naturalOrUsage(what: string, text: string): number | Outcome {
  return /^\d+$/.test(text) && Number.isSafeInteger(Number(text))
    ? Number(text)
    : usageOutcome(
      `Expected ${what} to be a non-negative integer but found "${text}"`,
    );
}

/**
 * {@link usageOutcome} with a command's usage line, for a command that
 * refuses its command line in more than one way.
 *
 * @param usage The command's usage line.
 * @returns The usage outcome of a message.
 */
export function usageWith(usage: string): (message: string) => Outcome {
  return (message) => usageOutcome(message, usage);
}

/**
 * The outcome of a tagged failure that is either about where the file is
 * (its tag is in `ioTags`: exit 2) or about what the file holds (exit 1).
 *
 * @param ioTags The tags of the errors about where the file is.
 * @param file The file the failure is about.
 * @param error The tagged error.
 * @returns The outcome.
 */
export function classifiedFailure(
  ioTags: ReadonlySet<string>,
  file: string,
  error: { readonly _tag: string },
): Outcome {
  return failureOutcome(
    ioTags.has(error._tag) ? ExitCode.usage : ExitCode.invalid,
    file,
    error,
  );
}

/** The tags of a failure to read a file or write a new one: about where, exit 2. */
export const fileWriteTags: ReadonlySet<string> = new Set([
  "FileIoError",
  "TargetExists",
]);

/**
 * The outcome of a command's last step, which writes a new file from `file`:
 * its failure classified by {@link fileWriteTags} (exit 2 for where, 1 for
 * what `file` holds), or what `ok` makes of its success.
 *
 * @param file The file the failure is about.
 * @param step The step.
 * @param ok The outcome of its success.
 * @returns `Effect<Outcome>`, which never fails.
 */
export function writeOutcome<A, E extends { readonly _tag: string }>(
  file: string,
  step: Effect.Effect<A, E>,
  ok: (a: A) => Outcome,
): Effect.Effect<Outcome> {
  return Effect.match(step, {
    onFailure: (error) => classifiedFailure(fileWriteTags, file, error),
    onSuccess: ok,
  });
}

/**
 * The outcome of a command's last step on a store or a session in one:
 * every failure is about where (exit 2), else what `ok` makes of its
 * success.
 *
 * @param where The folder, file or address the failure is about.
 * @param step The step.
 * @param ok The outcome of its success.
 * @returns `Effect<Outcome>`, which never fails.
 */
export function storeOutcome<A, E>(
  where: string,
  step: Effect.Effect<A, E>,
  ok: (a: A) => Outcome,
): Effect.Effect<Outcome> {
  return Effect.match(step, {
    onFailure: (error) => failureOutcome(ExitCode.usage, where, error),
    onSuccess: ok,
  });
}

/**
 * A command `NAME FILE --out NEW` that writes a new file from FILE: the
 * usage outcome `missing` without `--out`, else {@link writeOutcome} of
 * what `write` does.
 *
 * @param spec The command's usage.
 * @param missing The outcome when `--out` is not given.
 * @param write Writes NEW (`out`) from FILE.
 * @param ok The outcome of its success.
 * @returns The {@link Command}.
 */
export function fileToNewCommand<A, E extends { readonly _tag: string }>(
  spec: CommandSpec,
  missing: Outcome,
  write: (file: string, out: string, io: CliIo) => Effect.Effect<A, E>,
  ok: (a: A, out: string) => Outcome,
): Command {
  return {
    spec,
    run: (args, io) => {
      const file = args.positionals[0] ?? "";
      const out = args.values.get("out");
      if (out === undefined) return Effect.succeed(missing);
      return writeOutcome(
        file,
        Effect.suspend(() => write(file, out, io)),
        (a) => ok(a, out),
      );
    },
  };
}
