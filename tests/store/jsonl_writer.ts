/**
 * `deno run -A jsonl_writer.ts ROOT MODE ID [N]`: the conformance suite's
 * other process over the JSONL store at ROOT (see `writer_process.ts`).
 *
 * @module
 */
import { layerJsonlStore } from "@palimpsest/session";
import { runWriterProcess } from "./writer_process.ts";

const [root = ".", ...args] = Deno.args;
await runWriterProcess(layerJsonlStore({ root }), args);
