/**
 * A small argument parser for the command line: positionals, boolean flags
 * and string options (`--out NEW` or `--out=NEW`), `--` to end options, and
 * `-h` for `--help`. Hand-written because the CLI needs exact control of
 * exit codes and of where usage errors go, and the grammar is this small.
 *
 * This module owns parsing and usage text, not what a command does.
 *
 * @module
 */
import { Result } from "effect";

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
}

/** What a command accepts, for parsing and for `--help`. */
export interface CommandSpec {
  /** The command name. */
  readonly name: string;
  /** One line for the command list. */
  readonly summary: string;
  /** A paragraph for `--help`. */
  readonly description: string;
  /** The positional arguments, all required. */
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

/** The command line does not match the command's usage. */
export interface UsageProblem {
  /** The tag. */
  readonly _tag: "UsageError";
  /** A sentence for people. */
  readonly message: string;
}

/** The options every command takes. */
export const commonOptions: ReadonlyArray<OptionSpec> = [
  {
    name: "json",
    kind: "boolean",
    summary: "print one JSON document on stdout instead of text",
  },
  { name: "help", kind: "boolean", summary: "show this help" },
];

const usage = (message: string): UsageProblem => ({
  _tag: "UsageError",
  message,
});

const looksNumeric = (arg: string): boolean => /^-\d/.test(arg);

/**
 * Parses a command's arguments (after the command name).
 *
 * @param spec The command's usage.
 * @param argv The arguments.
 * @returns The parsed arguments, or a usage problem. With `--help` the
 * positionals are not checked.
 */
export function parseArgs(
  spec: CommandSpec,
  argv: ReadonlyArray<string>,
): Result.Result<ParsedArgs, UsageProblem> {
  const options = new Map<string, OptionSpec>();
  for (const option of [...commonOptions, ...spec.options]) {
    options.set(option.name, option);
  }
  const positionals: string[] = [];
  const flags = new Set<string>();
  const values = new Map<string, string>();
  let onlyPositionals = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (onlyPositionals || !arg.startsWith("-") || looksNumeric(arg)) {
      positionals.push(arg);
      continue;
    }
    if (arg === "--") {
      onlyPositionals = true;
      continue;
    }
    if (arg === "-h") {
      flags.add("help");
      continue;
    }
    if (!arg.startsWith("--")) {
      return Result.fail(
        usage(`Unknown option "${arg}"; options are spelled "--name"`),
      );
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    const option = options.get(name);
    if (option === undefined) {
      return Result.fail(
        usage(
          `Unknown option "--${name}" for "${spec.name}"; run "${spec.name} --help" for its options`,
        ),
      );
    }
    if (option.kind === "boolean") {
      if (eq !== -1) {
        return Result.fail(
          usage(`Option "--${name}" takes no value; drop "${arg.slice(eq)}"`),
        );
      }
      flags.add(name);
      continue;
    }
    let value: string | undefined;
    if (eq !== -1) {
      value = arg.slice(eq + 1);
    } else if (argv[i + 1]?.startsWith("--") !== true) {
      // A following option is not taken as the value: "--out --json" is a
      // missing value, not a file named "--json" ("--out=--json" is one).
      value = argv[i + 1];
      i += 1;
    }
    if (value === undefined || value === "") {
      return Result.fail(
        usage(
          `Option "--${name}" needs a value; write "--${name} ${
            option.value ?? "VALUE"
          }"`,
        ),
      );
    }
    values.set(name, value);
  }
  if (!flags.has("help")) {
    const missing = spec.positionals[positionals.length];
    if (missing !== undefined) {
      return Result.fail(
        usage(
          `Missing ${missing.name} for "${spec.name}"; usage: ${
            usageLine(spec)
          }`,
        ),
      );
    }
    if (positionals.length > spec.positionals.length) {
      return Result.fail(
        usage(
          `Unexpected argument "${
            positionals[spec.positionals.length]
          }" for "${spec.name}"; usage: ${usageLine(spec)}`,
        ),
      );
    }
  }
  return Result.succeed({ positionals, flags, values });
}

/**
 * The one-line usage of a command.
 *
 * @param spec The command's usage.
 * @returns For example `migrate FILE --out NEW [--json]`.
 */
export function usageLine(spec: CommandSpec): string {
  const parts = [spec.name, ...spec.positionals.map((p) => p.name)];
  for (const option of spec.options) {
    parts.push(
      option.kind === "string"
        ? `--${option.name} ${option.value ?? "VALUE"}`
        : `[--${option.name}]`,
    );
  }
  parts.push("[--json]");
  return parts.join(" ");
}

/**
 * The `--help` text of a command.
 *
 * @param spec The command's usage.
 * @returns Usage, description, arguments and options, ending with a newline.
 */
export function helpText(spec: CommandSpec): string {
  const lines = [`Usage: palimpsest ${usageLine(spec)}`, "", spec.description];
  if (spec.positionals.length > 0) {
    lines.push("", "Arguments:");
    for (const p of spec.positionals) {
      lines.push(`  ${p.name.padEnd(14)}${p.summary}`);
    }
  }
  lines.push("", "Options:");
  for (const o of [...spec.options, ...commonOptions]) {
    const label = o.kind === "string"
      ? `--${o.name} ${o.value ?? "VALUE"}`
      : `--${o.name}`;
    lines.push(`  ${label.padEnd(14)}${o.summary}`);
  }
  lines.push("", "Exit codes: 0 valid, 1 the log is invalid or was refused,");
  lines.push("2 usage or I/O error.");
  return `${lines.join("\n")}\n`;
}
