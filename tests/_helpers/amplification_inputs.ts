/**
 * The amplification inputs and the lines they are made of, shared by the
 * benchmark (`bench/amplification.ts`), the fuzz category
 * (`tests/fuzz/amplification_fuzz_test.ts`) and the follow tests: a v3
 * header and a user message whose `seq` and source list are whatever the
 * input asks for, and the named inputs of `docs/reliability.md` (small
 * files whose numbers ask for huge allocations); and {@link verifyProcess},
 * which runs the real command line's `verify` on one of them.
 *
 * @module
 */
import { fileURLToPath } from "node:url";

/** A v3 session header line. */
export const HEADER =
  '{"type":"session","version":3,"id":"a","createdAt":0,"isSeeded":false}';

/** The largest safe integer: the last seq a log can hold. */
export const LAST_SAFE: number = Number.MAX_SAFE_INTEGER;

/**
 * A `user/message` line with any `seq` and, if given, any stored source list
 * (runs included), unchecked.
 *
 * @param seq The `seq` field, valid or not.
 * @param sources The `sourceEventSeqs` field, when present.
 * @returns The JSON line.
 */
export const userLine = (seq: unknown, sources?: unknown): string =>
  JSON.stringify({
    type: "user/message",
    seq,
    time: 0,
    data: {
      id: `m${String(seq)}`,
      role: "user",
      content: [],
      source: { kind: "user" },
    },
    surfaceOp: "append",
    ...(sources === undefined ? {} : { sourceEventSeqs: sources }),
  });

const DEPTH = 1_000_000;
const deep = `${"[".repeat(DEPTH)}0${"]".repeat(DEPTH)}`;

/** The inputs: a name and the lines after the header. */
export const inputs: ReadonlyArray<
  readonly [string, () => ReadonlyArray<string>]
> = [
  ["one event (the baseline)", () => [
    '{"type":"turn/start","seq":0,"time":0,"data":{"turn":0}}',
  ]],
  ['"seq":"x", run [0, 2^53-2]', () => [userLine("x", [[0, LAST_SAFE - 1]])]],
  ["seq 2^53-1, run [0, 2^53-2]", () => [
    userLine(LAST_SAFE, [[0, LAST_SAFE - 1]]),
  ]],
  ["seq 2^53-1, 1,000 runs of 10^11", () => [
    userLine(
      LAST_SAFE,
      Array.from(
        { length: 1000 },
        (_, i) => [i * 1e11 + i, i * 1e11 + i + 1e11 - 1],
      ),
    ),
  ]],
  ["20,000 lines, line k citing [[0, k-1]]", () =>
    Array.from(
      { length: 20_000 },
      (_, k) => userLine(k, k >= 3 ? [[0, k - 1]] : undefined),
    )],
  ["data.turn nested 1M deep", () => [
    `{"type":"turn/start","seq":0,"time":0,"data":{"turn":${deep}}}`,
  ]],
  ["opaque data nested 1M deep", () => [
    `{"type":"x/y","seq":0,"time":0,"ignorable":true,"data":${deep}}`,
  ]],
  ["seq nested 1M deep", () => [
    `{"type":"turn/start","seq":${deep},"time":0,"data":{"turn":0}}`,
  ]],
  ["660k empty arrays side by side", () => [
    `{"type":"x/y","seq":0,"time":0,"ignorable":true,"data":[${
      Array.from({ length: 660_000 }, () => "[]").join(",")
    }]}`,
  ]],
];

const CLI = fileURLToPath(new URL("../../cli/main.ts", import.meta.url));

/**
 * Runs `verify FILE --json` through the real command line in a process of
 * its own, with read and environment access only.
 *
 * @param file The log to verify.
 * @param options `wrapper`: a program and its arguments the Deno process
 *   runs under (GNU `time`, say); `denoFlags`: flags of `deno run` (a V8
 *   heap ceiling, say).
 * @returns The process's exit code and piped output.
 */
export const verifyProcess = (
  file: string,
  options: {
    readonly wrapper?: ReadonlyArray<string>;
    readonly denoFlags?: ReadonlyArray<string>;
  } = {},
): Deno.CommandOutput => {
  const [program = Deno.execPath(), ...prefix] = [
    ...(options.wrapper ?? []),
    Deno.execPath(),
  ];
  return new Deno.Command(program, {
    args: [
      ...prefix,
      "run",
      "--allow-read",
      "--allow-env",
      ...(options.denoFlags ?? []),
      CLI,
      "verify",
      file,
      "--json",
    ],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
};
