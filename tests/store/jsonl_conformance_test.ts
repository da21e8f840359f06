/**
 * The store conformance suite against the JSONL layer, with writers in
 * other processes and a look at the descriptors and lock files it holds.
 *
 * @module
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { layerJsonlStore } from "@palimpsest/session";
import { spawnDenoWriter, storeConformance } from "./conformance.ts";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "conformance-jsonl-"));
const writer = new URL("./jsonl_writer.ts", import.meta.url).pathname;

/**
 * Open descriptors of this process on files under the root, and lock and
 * temp files. Deno reads `/proc/self/fd` only with `--allow-all`, so `ls`
 * (a subprocess) lists this process's descriptors.
 */
const held = (): ReadonlyArray<string> => {
  const listing = new Deno.Command("ls", {
    args: ["-l", `/proc/${Deno.pid}/fd`],
    stdout: "piped",
    stderr: "null",
  }).outputSync();
  const found = new TextDecoder().decode(listing.stdout).split("\n")
    .filter((line) => line.includes(`-> ${root}`))
    .map((line) => line.slice(line.indexOf(" -> ") + 4));
  for (const name of fs.readdirSync(root)) {
    if (name.endsWith(".lock") || name.endsWith(".tmp")) found.push(name);
  }
  return found;
};

storeConformance({
  name: "layerJsonlStore",
  layer: () => layerJsonlStore({ root, pollInterval: "10 millis" }),
  spawnWriter: (args) => spawnDenoWriter(writer, [root], args),
  held,
});
