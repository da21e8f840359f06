/** Running the command line in-process, and a scratch folder, for the import and export command tests. */
import { recordingIo, runCli } from "@palimpsest/session/cli";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/** Runs `palimpsest ARGS`: its exit code, stdout and stderr. */
export const run = async (
  ...args: string[]
): Promise<{ code: number; out: string; err: string }> => {
  const io = recordingIo();
  const code = await runCli(args, io);
  return { code, out: io.out(), err: io.err() };
};

/** Runs `f` with a new folder, removed afterwards. */
export const withDir = async (
  prefix: string,
  f: (dir: string) => Promise<void>,
): Promise<void> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  try {
    await f(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
};
