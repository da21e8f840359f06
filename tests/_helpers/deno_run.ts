/**
 * Running Deno in a child process, for the tests that need a fresh one (the
 * README's examples, the demo, a second replay, a CLI in another process):
 * no colour, output piped, and a failed assertion showing the child's stderr
 * unless it exits 0.
 *
 * @module
 */
import assert from "node:assert/strict";

/** Where and with what environment the child runs. */
export interface DenoRunOptions {
  /** The working directory; the test's own by default. */
  readonly cwd?: string;
  /** Variables set besides `NO_COLOR=1`. */
  readonly env?: Readonly<Record<string, string>>;
}

const command = (
  args: ReadonlyArray<string>,
  options: DenoRunOptions,
): Deno.Command =>
  new Deno.Command(Deno.execPath(), {
    args: [...args],
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    env: { NO_COLOR: "1", ...options.env },
    stdout: "piped",
    stderr: "piped",
  });

const stdoutOf = (output: Deno.CommandOutput): string => {
  assert.equal(output.code, 0, new TextDecoder().decode(output.stderr));
  return new TextDecoder().decode(output.stdout);
};

/**
 * Runs `deno ...args` and asserts that it exits 0.
 *
 * @param args The arguments of `deno`, e.g. `["run", "-A", file]`.
 * @param options The working directory and environment.
 * @returns What it printed on stdout.
 */
export const denoOk = async (
  args: ReadonlyArray<string>,
  options: DenoRunOptions = {},
): Promise<string> => stdoutOf(await command(args, options).output());

/**
 * {@link denoOk}, waiting for the child synchronously.
 *
 * @param args The arguments of `deno`.
 * @param options The working directory and environment.
 * @returns What it printed on stdout.
 */
export const denoOkSync = (
  args: ReadonlyArray<string>,
  options: DenoRunOptions = {},
): string => stdoutOf(command(args, options).outputSync());
