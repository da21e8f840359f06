/**
 * The command tree on `effect/cli`. Each command's usage ({@link CommandSpec})
 * becomes an `effect/cli` `Command` with its arguments and flags, under the
 * `palimpsest` root, which adds `--help`, `--version`, `--completions SHELL`
 * and the `completions SHELL` command. Parsing, help and completion scripts
 * are effect's; what a command does stays in its own module and returns an
 * {@link Outcome}, which {@link runApp} writes and turns into the exit code.
 *
 * Everything the tree writes goes to a {@link CliIo}, never to the process's
 * own streams, so the CLI runs in-process for tests and embedding.
 *
 * @module
 */
import * as Cause from "effect/Cause";
import * as Console from "effect/Console";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as FileSystem from "effect/FileSystem";
import * as Layer from "effect/Layer";
import * as Option from "effect/Option";
import * as Path from "effect/Path";
import * as Schema from "effect/Schema";
import * as Stdio from "effect/Stdio";
import * as Terminal from "effect/Terminal";
import {
  Argument,
  CliConfig,
  type CliError,
  CliOutput,
  Command,
  Completions,
  Flag,
  GlobalFlag,
} from "effect/cli";
import { ChildProcessSpawner } from "effect/process";
import type { CommandSpec, ParsedArgs } from "./args.ts";
import type { CliIo } from "./io.ts";
import {
  type Command as CommandModule,
  ExitCode,
  type Outcome,
} from "./outcome.ts";

/** The program name, as `--help` and completion scripts show it. */
export const PROGRAM = "palimpsest";

const PRETTY_LIMIT = 1 << 20;

/** The shells `completions` writes scripts for. */
export const SHELLS: ReadonlyArray<"bash" | "zsh" | "fish"> = [
  "bash",
  "zsh",
  "fish",
];

type Parsed = {
  readonly positionals: ReadonlyArray<string | Option.Option<string>>;
  readonly flags: { readonly [name: string]: boolean | Option.Option<string> };
};

/** Writes an outcome: its JSON document with `--json`, else its text. */
export const writeOutcome = (
  io: CliIo,
  json: boolean,
  outcome: Outcome,
): void => {
  if (json) {
    // Indented for people when small; past 1 MiB (the messages of a long
    // log) indentation only adds bytes nobody reads.
    const compact = JSON.stringify(outcome.json);
    io.stdout(
      `${
        compact.length <= PRETTY_LIMIT
          ? JSON.stringify(outcome.json, null, 2)
          : compact
      }\n`,
    );
    return;
  }
  if (outcome.text !== "") io.stdout(outcome.text);
  if (outcome.errText !== undefined && outcome.errText !== "") {
    io.stderr(outcome.errText);
  }
};

const flagsOf = (spec: CommandSpec) => {
  const flags: {
    [name: string]: Flag.Flag<boolean> | Flag.Flag<Option.Option<string>>;
  } = {
    json: Flag.Boolean("json").pipe(
      Flag.withDescription(
        "Print one JSON document on stdout instead of text",
      ),
      Flag.withDefault(false),
    ),
  };
  for (const option of spec.options) {
    flags[option.name] = option.kind === "boolean"
      ? Flag.Boolean(option.name).pipe(
        Flag.withDescription(option.summary),
        Flag.withDefault(false),
      )
      : Flag.String(option.name).pipe(
        Flag.withSchema(Schema.NonEmptyString),
        Flag.withMetavar(option.value ?? "VALUE"),
        Flag.withDescription(option.summary),
        Flag.optional,
      );
  }
  return flags;
};

const parsedArgsOf = (parsed: Parsed): ParsedArgs => {
  const flags = new Set<string>();
  const values = new Map<string, string>();
  for (const [name, value] of Object.entries(parsed.flags)) {
    if (value === true) flags.add(name);
    else if (typeof value === "object" && Option.isSome(value)) {
      values.set(name, value.value);
    }
  }
  const positionals = parsed.positionals.flatMap((value) =>
    typeof value === "string"
      ? [value]
      : Option.isSome(value)
      ? [value.value]
      : []
  );
  return { positionals, flags, values };
};

/** What one run of the tree ends with. */
interface RunState {
  code: ExitCode;
}

const toEffectCommand = (
  command: CommandModule,
  io: CliIo,
  state: RunState,
) => {
  const spec = command.spec;
  return Command.make(
    spec.name,
    {
      positionals: spec.positionals.map((
        positional,
      ): Argument.Argument<string | Option.Option<string>> =>
        positional.optional === true
          ? Argument.String(positional.name).pipe(
            Argument.withDescription(positional.summary),
            Argument.optional,
          )
          : Argument.String(positional.name).pipe(
            Argument.withDescription(positional.summary),
          )
      ),
      flags: flagsOf(spec),
    },
    (parsed: Parsed) =>
      Effect.map(command.run(parsedArgsOf(parsed), io), (outcome) => {
        writeOutcome(io, parsed.flags["json"] === true, outcome);
        state.code = outcome.code;
      }),
  ).pipe(
    // effect's help indents a description's first line only.
    Command.withDescription(spec.description.replaceAll("\n", "\n  ")),
    Command.withShortDescription(spec.summary),
  );
};

const completionsCommand = (
  holder: Holder,
  io: CliIo,
) =>
  Command.make(
    "completions",
    {
      shell: Argument.Literals("SHELL", SHELLS).pipe(
        Argument.withDescription("the shell: bash, zsh or fish"),
      ),
    },
    ({ shell }) =>
      Effect.sync(() => {
        if (holder.root === undefined) return;
        io.stdout(
          `${
            Completions.generate(
              PROGRAM,
              shell,
              Completions.fromCommand(holder.root),
            )
          }\n`,
        );
      }),
  ).pipe(
    Command.withShortDescription("print a shell completion script"),
    Command.withDescription(
      "Prints the completion script of SHELL (bash, zsh or fish) on stdout, e.g.\n" +
        `    ${PROGRAM} completions bash > /etc/bash_completion.d/${PROGRAM}`,
    ),
  );

/** Runs the whole tree on arguments: what `help` calls with `--help`. */
type Runner = (
  args: ReadonlyArray<string>,
) => Effect.Effect<void, CliError.CliError, Command.Environment>;

/** The tree, for the commands that describe it. */
interface Holder {
  root?: Command.Command.Any;
  run?: Runner;
}

const helpCommand = (
  holder: Holder,
  names: ReadonlyArray<string>,
  onUsage: (usage: Usage) => void,
) =>
  Command.make(
    "help",
    {
      command: Argument.String("COMMAND").pipe(
        Argument.withDescription("the command to describe"),
        Argument.optional,
      ),
    },
    ({ command }): Effect.Effect<
      void,
      CliError.CliError,
      Command.Environment
    > =>
      Effect.suspend(() => {
        const run = holder.run;
        if (run === undefined) return Effect.void;
        if (Option.isNone(command)) return run(["--help"]);
        if (!names.includes(command.value)) {
          onUsage({
            message: `Unknown command "${command.value}"`,
            commandPath: [PROGRAM],
          });
          return Effect.void;
        }
        return run([command.value, "--help"]);
      }),
  ).pipe(
    Command.withShortDescription("show the help of a command"),
    Command.withDescription(
      "Prints the help of COMMAND, or the list of commands without one.",
    ),
  );

/**
 * The whole command tree, writing to `io`, as the runner of its arguments.
 *
 * @param modules The commands, in the order help lists them.
 * @param io Where output goes.
 * @param state Receives the exit code of the command that ran.
 * @param version What `--version` prints.
 * @param onUsage Told of a usage problem found by a command of the tree.
 * @returns What runs the tree on arguments.
 */
const makeRoot = (
  modules: ReadonlyArray<CommandModule>,
  io: CliIo,
  state: RunState,
  version: string,
  onUsage: (usage: Usage) => void,
): Runner => {
  // `help` and `completions` describe the whole tree, themselves included.
  const holder: Holder = {};
  const tree = Command.make(PROGRAM).pipe(
    Command.withDescription(
      "Inspect, check and repair palimpsest session logs (JSONL).\n" +
        "  Every command takes --json (one JSON document on stdout) and --help.\n" +
        "  Exit codes: 0 valid, 1 the log is invalid or was refused, 2 usage or I/O error.",
    ),
    Command.withSubcommands([
      ...modules.map((module) => toEffectCommand(module, io, state)),
      helpCommand(
        holder,
        [...modules.map((module) => module.spec.name), "completions", "help"],
        onUsage,
      ),
      completionsCommand(holder, io),
    ]),
  );
  holder.root = tree;
  const run = Command.runWith(tree, { version });
  holder.run = run;
  return run;
};

const ioConsole = (io: CliIo): Console.Console => {
  const line = (args: ReadonlyArray<unknown>): string =>
    `${
      args.map((arg) => typeof arg === "string" ? arg : String(arg)).join(" ")
    }\n`;
  return {
    ...globalThis.console,
    log: (...args: ReadonlyArray<unknown>) => io.stdout(line(args)),
    info: (...args: ReadonlyArray<unknown>) => io.stdout(line(args)),
    error: (...args: ReadonlyArray<unknown>) => io.stderr(line(args)),
    warn: (...args: ReadonlyArray<unknown>) => io.stderr(line(args)),
  };
};

/** A usage problem: what the parser rejected, for people and for `--json`. */
interface Usage {
  readonly message: string;
  readonly commandPath: ReadonlyArray<string>;
}

const unused = Effect.die("not used by the command line");

const environment = (io: CliIo, onUsage: (usage: Usage) => void) =>
  Layer.mergeAll(
    FileSystem.layerNoop({}),
    Path.layer,
    Stdio.layerTest({}),
    Layer.succeed(
      Terminal.Terminal,
      Terminal.make({
        columns: Effect.succeed(100),
        rows: Effect.succeed(24),
        size: unused,
        readInput: unused,
        readLine: unused,
        display: () => Effect.void,
      }),
    ),
    Layer.succeed(
      ChildProcessSpawner.ChildProcessSpawner,
      ChildProcessSpawner.make(() => unused),
    ),
    Layer.succeed(Console.Console, ioConsole(io)),
    // Help, version and completions; no wizard (it prompts) and no log level
    // (the command line logs nothing).
    CliConfig.layer({
      builtIns: [GlobalFlag.Help, GlobalFlag.Version, GlobalFlag.Completions],
    }),
    CliOutput.layerPresenter({
      present: (event) =>
        Effect.sync(() => {
          const formatter = CliOutput.defaultFormatter({ colors: false });
          switch (event._tag) {
            case "Help":
              io.stdout(`${formatter.formatHelpDoc(event.helpDoc)}\n`);
              return;
            case "Version":
              io.stdout(
                `${formatter.formatVersion(event.name, event.version)}\n`,
              );
              return;
            case "InvalidInvocation":
              onUsage({
                message: event.errors.map((error) => error.message).join("; "),
                commandPath: event.commandPath,
              });
              return;
          }
        }),
    }),
  );

const usageOutput = (io: CliIo, json: boolean, usage: Usage): void => {
  if (json) {
    io.stdout(
      `${
        JSON.stringify({
          ok: false,
          error: { tag: "UsageError", message: usage.message },
        })
      }\n`,
    );
    return;
  }
  const path = usage.commandPath.slice(1).join(" ");
  const hint = path === ""
    ? `run "${PROGRAM} --help" for the commands`
    : `run "${PROGRAM} ${path} --help" for its usage`;
  io.stderr(`error: ${usage.message}\n  hint: ${hint}\n`);
};

/**
 * Runs the command tree on `args` and returns the exit code: the command's
 * own (0, 1 or 2), 0 for `--help`, `--version` and completions, 2 for a
 * usage error (written with a hint, or as a JSON document with `--json`).
 *
 * @param modules The commands.
 * @param args The arguments after the program name.
 * @param io Where output goes.
 * @param version The version `--version` prints.
 * @returns `Effect<ExitCode>`; it never fails.
 */
export const runApp = (
  modules: ReadonlyArray<CommandModule>,
  args: ReadonlyArray<string>,
  io: CliIo,
  version: string,
): Effect.Effect<ExitCode> =>
  Effect.suspend(() => {
    const json = args.includes("--json");
    const state: RunState = { code: ExitCode.ok };
    let usage: Usage | undefined;
    const onUsage = (problem: Usage): void => {
      usage ??= problem;
    };
    const run = makeRoot(modules, io, state, version, onUsage);
    if (args.length === 0) {
      usage = { message: "A command is required", commandPath: [PROGRAM] };
    }
    const program = usage !== undefined ? Effect.void : run(args);
    return Effect.map(
      Effect.exit(
        program.pipe(
          Effect.provide(environment(io, onUsage)),
        ),
      ),
      (exit): ExitCode => {
        if (usage !== undefined) {
          usageOutput(io, json, usage);
          return ExitCode.usage;
        }
        if (Exit.isSuccess(exit)) return state.code;
        const error = Cause.findErrorOption(exit.cause);
        if (Option.isSome(error)) {
          // The commands never fail: a typed failure is the parser's.
          usageOutput(io, json, {
            message: error.value.message,
            commandPath: [PROGRAM],
          });
          return ExitCode.usage;
        }
        const message = `Internal error: ${Cause.pretty(exit.cause)}`;
        if (json) {
          io.stdout(
            `${
              JSON.stringify({
                ok: false,
                error: { tag: "InternalError", message },
              })
            }\n`,
          );
        } else {
          io.stderr(
            `error: ${message}\n  hint: this is a bug; please report it\n`,
          );
        }
        return ExitCode.usage;
      },
    );
  });
