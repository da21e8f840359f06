/**
 * Where the command line writes: stdout, stderr, and whether stderr is a
 * terminal (progress is shown only then). Tests pass a recording
 * {@link CliIo}; the entry point passes the process's streams.
 *
 * This module owns the output channel, not what is written on it.
 *
 * @module
 */

/** The output channel of one CLI run. */
export interface CliIo {
  /** Writes text to stdout as is (no newline added). */
  readonly stdout: (text: string) => void;
  /** Writes text to stderr as is (no newline added). */
  readonly stderr: (text: string) => void;
  /** True when stderr is a terminal, so progress may be drawn on it. */
  readonly stderrIsTerminal: boolean;
}

/** A {@link CliIo} that keeps what was written, for tests. */
export interface RecordingIo extends CliIo {
  /** Everything written to stdout. */
  readonly out: () => string;
  /** Everything written to stderr. */
  readonly err: () => string;
}

/**
 * An output channel that records what is written, for calling the CLI
 * in-process.
 *
 * @param stderrIsTerminal Pretend stderr is a terminal; false by default.
 * @returns The recording channel.
 *
 * @example Recording a run
 * ```ts
 * import { recordingIo, runCli } from "@palimpsest/session/cli";
 * import assert from "node:assert/strict";
 *
 * const io = recordingIo();
 * const code = await runCli(["schema", "--json"], io);
 * assert.equal(code, 0);
 * assert.equal(JSON.parse(io.out()).$schema, "https://json-schema.org/draft/2020-12/schema");
 * ```
 */
export function recordingIo(stderrIsTerminal = false): RecordingIo {
  const out: string[] = [];
  const err: string[] = [];
  return {
    stdout: (text) => {
      out.push(text);
    },
    stderr: (text) => {
      err.push(text);
    },
    stderrIsTerminal,
    out: () => out.join(""),
    err: () => err.join(""),
  };
}

/**
 * A text writer over a blocking byte sink: it writes the whole of each text
 * and, once the reader has gone away (`| head`), drops the rest of the
 * output, which is then unwanted.
 *
 * @param writeSync Writes `bytes` from `offset` on; returns how many it wrote.
 * @param isBrokenPipe Whether an error `writeSync` threw says the reader went away.
 * @returns The writer.
 */
export function blockingWriter(
  writeSync: (bytes: Uint8Array, offset: number) => number,
  isBrokenPipe: (error: unknown) => boolean,
): (text: string) => void {
  const encoder = new TextEncoder();
  let closed = false;
  return (text) => {
    if (closed) return;
    const bytes = encoder.encode(text);
    let offset = 0;
    try {
      while (offset < bytes.length) offset += writeSync(bytes, offset);
    } catch (error) {
      if (!isBrokenPipe(error)) throw error;
      closed = true;
    }
  };
}
