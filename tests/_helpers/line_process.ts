/**
 * A child process spoken to line by line: the writers of the store tests
 * (`tests/store/claim_writer.ts`; the conformance suite's writers have their own in `src/testing`), started
 * directly or under another command such as `strace`.
 *
 * @module
 */
import assert from "node:assert/strict";

/** A child process that reads lines on stdin and prints lines on stdout. */
export interface LineProcess {
  /** The next line it printed; `undefined` once its output ends. */
  readonly line: () => Promise<string | undefined>;
  /** Sends a line to its stdin. */
  readonly send: (line: string) => Promise<void>;
  /** Closes its stdin: a holder then releases the session and exits. */
  readonly end: () => Promise<void>;
  /** Sends a signal. */
  readonly kill: (signal: Deno.Signal) => void;
  /** Its exit status, once its output is drained. */
  readonly status: Promise<Deno.CommandStatus>;
}

/** Starts `command args`, its stderr inherited. */
export const spawnLineProcess = (
  command: string,
  args: ReadonlyArray<string>,
): LineProcess => {
  const child = new Deno.Command(command, {
    args: [...args],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const writer = child.stdin.getWriter();
  let buffer = "";
  let done = false;
  const line = async (): Promise<string | undefined> => {
    for (;;) {
      const nl = buffer.indexOf("\n");
      if (nl >= 0) {
        const out = buffer.slice(0, nl);
        buffer = buffer.slice(nl + 1);
        return out;
      }
      if (done) return buffer.length > 0 ? buffer : undefined;
      const next = await reader.read();
      if (next.done) done = true;
      else buffer += next.value;
    }
  };
  const encoder = new TextEncoder();
  const status = child.status.then(async (s) => {
    // Drain what is left so the stream is closed.
    while (!done) {
      const next = await reader.read();
      if (next.done) done = true;
      else buffer += next.value;
    }
    return s;
  });
  return {
    line,
    send: (text) => writer.write(encoder.encode(`${text}\n`)),
    end: async () => {
      try {
        await writer.close();
      } catch {
        // Already closed by its exit.
      }
    },
    kill: (signal) => {
      try {
        child.kill(signal);
      } catch {
        // Already exited.
      }
    },
    status,
  };
};

/**
 * The pid a child announces on its first line (`pid N`), read from its
 * decoded stdout; the rest of the output stays in `reader`.
 */
const readPid = async (
  reader: ReadableStreamDefaultReader<string>,
): Promise<number> => {
  let out = "";
  while (!out.includes("\n")) {
    const next = await reader.read();
    if (next.done) break;
    out += next.value;
  }
  const pid = Number(/^pid (\d+)/.exec(out)?.[1]);
  assert.ok(pid > 0, out);
  return pid;
};

/**
 * strace arguments that trace `calls` (comma-separated system call names)
 * and delay each of them by `delayUs` microseconds on entry.
 */
export const delaying = (
  calls: string,
  delayUs: number,
): ReadonlyArray<string> => [
  "-e",
  `trace=${calls}`,
  "-e",
  `inject=${calls}:delay_enter=${delayUs}`,
];

/**
 * strace arguments that follow every thread of the traced program, write
 * the trace (with file descriptors' paths) to `log`, and delay each of
 * `calls` as {@link delaying} does.
 */
export const tracingInto = (
  log: string,
  calls: string,
  delayUs: number,
): ReadonlyArray<string> => [
  "-f",
  "-qq",
  "-y",
  "-o",
  log,
  ...delaying(calls, delayUs),
];

/** A Deno program running under strace, as {@link spawnTraced} starts it. */
export interface Traced {
  readonly traced: Deno.ChildProcess;
  /** Its decoded stdout, past the first line. */
  readonly reader: ReadableStreamDefaultReader<string>;
  /** The pid the program announced on its first line (`pid N`). */
  readonly pid: number;
}

/**
 * Runs `deno run -A` with `args` (the script and its arguments) under strace,
 * tracing into `log` as {@link tracingInto} does, and reads the pid the
 * program announces first: the process to kill, not strace's.
 */
export const spawnTraced = async (
  log: string,
  calls: string,
  delayUs: number,
  args: ReadonlyArray<string>,
  stderr: "null" | "piped",
): Promise<Traced> => {
  const traced = new Deno.Command("strace", {
    args: [
      ...tracingInto(log, calls, delayUs),
      Deno.execPath(),
      "run",
      "-A",
      ...args,
    ],
    stdout: "piped",
    stderr,
  }).spawn();
  const reader = traced.stdout.pipeThrough(new TextDecoderStream())
    .getReader();
  return { traced, reader, pid: await readPid(reader) };
};
