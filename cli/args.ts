/**
 * What a command accepts ({@link CommandSpec}) and what it is given
 * ({@link ParsedArgs}). `app.ts` turns a spec into an `effect/cli` command,
 * which parses the arguments and prints help and completions; a command
 * module only declares its usage and reads its parsed arguments. The
 * options several commands share are made here ({@link outOption},
 * {@link fromOption}).
 *
 * @module
 */

/** One `--option` of a command. */
export interface OptionSpec {
  /** The long name, without `--`. */
  readonly name: string;
  /** A boolean flag, or an option taking one value. */
  readonly kind: "boolean" | "string";
  /** For string options: the placeholder shown in usage, e.g. `NEW`. */
  readonly value?: string;
  /** One line for `--help`. */
  readonly summary: string;
}

/** One positional argument of a command. */
export interface PositionalSpec {
  /** The placeholder shown in usage, e.g. `FILE`. */
  readonly name: string;
  /** One line for `--help`. */
  readonly summary: string;
  /** True when the argument may be left out (only the last ones may). */
  readonly optional?: boolean;
}

/** What a command accepts, for parsing and for `--help`. */
export interface CommandSpec {
  /** The command name. */
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  /** A paragraph for `--help`. */
  readonly description: string;
  /** The positional arguments, required unless marked optional. */
  readonly positionals: ReadonlyArray<PositionalSpec>;
  /** The options besides `--json` and `--help`, which every command takes. */
  readonly options: ReadonlyArray<OptionSpec>;
}

/** Parsed arguments of one command. */
export interface ParsedArgs {
  /** Positional values, in order. */
  readonly positionals: ReadonlyArray<string>;
  /** Boolean flags that were given. */
  readonly flags: ReadonlySet<string>;
  /** String options that were given, by name. */
  readonly values: ReadonlyMap<string, string>;
}

/**
 * `--out VALUE`: the new file a command writes.
 *
 * @param value The placeholder, e.g. `NEW`.
 * @param summary The line for `--help`.
 * @returns The option.
 */
export const outOption = (value: string, summary: string): OptionSpec => ({
  name: "out",
  kind: "string",
  value,
  summary,
});

/**
 * `--from TOOL`: FILE is a session file another tool wrote (pi,
 * claude-code, codex or opencode), read through the importer.
 *
 * @param summary The line for `--help`.
 * @returns The option.
 */
export const fromOption = (summary: string): OptionSpec => ({
  name: "from",
  kind: "string",
  value: "TOOL",
  summary,
});
