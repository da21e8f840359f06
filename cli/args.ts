/**
 * What a command accepts ({@link CommandSpec}) and what it is given
 * ({@link ParsedArgs}). `app.ts` turns a spec into an `effect/cli` command,
 * which parses the arguments and prints help and completions; a command
 * module only declares its usage and reads its parsed arguments. The
 * options several commands share are made here ({@link stringOption},
 * {@link outOption}, {@link fromOption}); what they say of the tools `--from` takes comes from
 * the importer list (`importers` of `@palimpsest/session/import`).
 *
 * @module
 */
import { exporters, importers } from "@palimpsest/session/import";

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
 * `--NAME VALUE`: an option taking one value.
 *
 * @param name The option's name, without `--`.
 * @param value The placeholder, e.g. `SEQ`.
 * @param summary The line for `--help`.
 * @returns The option.
 */
export const stringOption = (
  name: string,
  value: string,
  summary: string,
): OptionSpec => ({ name, kind: "string", value, summary });

/**
 * `--out VALUE`: the new file a command writes.
 *
 * @param value The placeholder, e.g. `NEW`.
 * @param summary The line for `--help`.
 * @returns The option.
 */
export const outOption = (value: string, summary: string): OptionSpec =>
  stringOption("out", value, summary);

/**
 * `--NAME`: a boolean flag.
 *
 * @param name The flag's name, without `--`.
 * @param summary The line for `--help`.
 * @returns The option.
 */
export const flagOption = (name: string, summary: string): OptionSpec => ({
  name,
  kind: "boolean",
  summary,
});

/**
 * `items` as a list in a sentence: `a, b or c`.
 *
 * @param items The items.
 * @returns The list.
 */
export const orList = (items: ReadonlyArray<string>): string =>
  items.length <= 1
    ? items.join("")
    : `${items.slice(0, -1).join(", ")} or ${items[items.length - 1]}`;

/** The names `--from` takes, for a usage line: `pi|claude-code|...`. */
export const fromValues: string = importers.map((i) => i.name).join("|");

/** The tools `--from` reads, by name in a sentence: `pi, Claude Code, ...`. */
export const fromTools: string = orList(importers.map((i) => i.tool));

/** The names `--from` takes, in a sentence: `pi, claude-code, ... or opencode`. */
export const fromNames: string = orList(importers.map((i) => i.name));

/** One line per tool `--from` takes, indented, for a command's description. */
export const fromList: string = importers.map((i) =>
  `  ${i.name.padEnd(13)}${i.description}`
).join("\n");

/**
 * `--from TOOL`: FILE is a session file another tool wrote (one of the
 * importers' names), read through the importer.
 *
 * @param summary The line for `--help`.
 * @returns The option.
 */
export const fromOption = (summary: string): OptionSpec =>
  stringOption("from", "TOOL", summary);

/** The names `--to` takes, for a usage line: `pi|claude-code|codex`. */
export const toValues: string = exporters.map((e) => e.name).join("|");

/** The tools `--to` writes for, by name in a sentence. */
export const toTools: string = orList(exporters.map((e) => e.tool));

/** One line per tool `--to` takes, indented, for a command's description. */
export const toList: string = exporters.map((e) =>
  `  ${e.name.padEnd(13)}${e.description}\n  ${
    "".padEnd(13)
  }resumed with \`${e.resume}\``
).join("\n");
