/**
 * `deno run -A jsonl_writer.ts ROOT MODE ID [N]`: the conformance suite's
 * other process over the JSONL store at ROOT (see `runWriterProcess` in `@palimpsest/session/testing`).
 *
 * @module
 */
import { layerJsonlStore } from "@palimpsest/session";
import { runWriterProcess } from "@palimpsest/session/testing";

const [root = ".", ...args] = Deno.args;
await runWriterProcess(layerJsonlStore({ root }), args);
