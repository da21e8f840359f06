/**
 * The `palimpsest` command line under Node: the build puts this module in
 * place of `cli/main.ts`, whose process streams are Deno's. It exports the
 * same names; {@link processIo} writes to Node's file descriptors 1 and 2.
 *
 * @module
 */
import * as fs from "node:fs";
import process from "node:process";
import { blockingWriter, type CliIo } from "./io.ts";

export { type CliIo, type RecordingIo, recordingIo } from "./io.ts";
export { runCli } from "./run.ts";

const writeAll = (fd: number) =>
  blockingWriter(
    (bytes, offset) => fs.writeSync(fd, bytes, offset),
    (error) => (error as NodeJS.ErrnoException).code === "EPIPE",
  );

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
