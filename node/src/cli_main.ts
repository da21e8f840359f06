/**
 * The `palimpsest` command line under Node: the build puts this module in
 * place of `cli/main.ts`, whose process streams are Deno's. It exports the
 * same names; {@link processIo} writes to Node's file descriptors 1 and 2.
 *
 * @module
 */
import * as fs from "node:fs";
import process from "node:process";
import { type CliIo, type RecordingIo, recordingIo } from "./io.ts";
import { runCli } from "./run.ts";

export { type CliIo, type RecordingIo, recordingIo, runCli };

const writeAll = (fd: number) => {
  const encoder = new TextEncoder();
  let closed = false;
  return (text: string): void => {
    if (closed) return;
    const bytes = encoder.encode(text);
    let offset = 0;
    try {
      while (offset < bytes.length) {
        offset += fs.writeSync(fd, bytes, offset);
      }
    } catch (error) {
      // The reader went away (`| head`): the rest of the output is unwanted.
      if ((error as NodeJS.ErrnoException).code !== "EPIPE") throw error;
      closed = true;
    }
  };
};

/**
 * The process's own output channel: Node's stdout and stderr.
 *
 * @returns A {@link CliIo} writing to the process's streams.
 */
export function processIo(): CliIo {
  return {
    stdout: writeAll(1),
    stderr: writeAll(2),
    stderrIsTerminal: process.stderr.isTTY === true,
  };
}
