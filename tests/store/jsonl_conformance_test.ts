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
import { heldUnder } from "./held.ts";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "conformance-jsonl-"));
const writer = new URL("./jsonl_writer.ts", import.meta.url).pathname;

storeConformance({
  name: "layerJsonlStore",
  layer: () => layerJsonlStore({ root, pollInterval: "10 millis" }),
  spawnWriter: (args) => spawnDenoWriter(writer, [root], args),
  held: () => heldUnder(root),
});
