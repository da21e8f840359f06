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
import {
  checkpointConformance,
  spawnDenoWriter,
  storeConformance,
} from "@palimpsest/session/testing";
import { viewReaders } from "../_helpers/checkpoints.ts";
import { heldUnder } from "./held.ts";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "conformance-jsonl-"));
const writer = new URL("./jsonl_writer.ts", import.meta.url).pathname;

storeConformance({
  name: "layerJsonlStore",
  layer: () => layerJsonlStore({ root, pollInterval: "10 millis" }),
  spawnWriter: (args) => spawnDenoWriter(writer, [root], args),
  held: () => heldUnder(root),
});

checkpointConformance({
  readers: viewReaders,
  name: "layerJsonlStore",
  make: (checkpoints) => {
    const folder = fs.mkdtempSync(path.join(os.tmpdir(), "checkpoints-jsonl-"));
    // Ids in these tests are plain: the file name is the id.
    const sidecar = (id: string) => path.join(folder, `${id}.jsonl.checkpoint`);
    return {
      layer: layerJsonlStore({ root: folder, checkpoints }),
      get: (id) =>
        Promise.resolve(
          fs.existsSync(sidecar(id))
            ? fs.readFileSync(sidecar(id), "utf8")
            : undefined,
        ),
      set: (id, text) => Promise.resolve(fs.writeFileSync(sidecar(id), text)),
    };
  },
});
