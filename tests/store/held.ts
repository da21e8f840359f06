/**
 * What this process holds under a folder (open descriptors on files in it,
 * lock or temp files left in it), and large logs to interrupt reading. Deno reads `/proc/self/fd` only with
 * `--allow-all`, so `ls` (a subprocess) lists this process's descriptors.
 *
 * @module
 */
import * as fs from "node:fs";
import { descriptorsOn } from "../_helpers/descriptors.ts";

/**
 * Lists what is held under `root`.
 *
 * @param root The folder.
 * @returns One description per descriptor or stray file; empty when none.
 */
export const heldUnder = (root: string): ReadonlyArray<string> => {
  const found = descriptorsOn(root).map((target) => `descriptor on ${target}`);
  for (const name of fs.readdirSync(root)) {
    if (/\.lock(\.|$)/.test(name) || name.includes(".tmp")) {
      found.push(`file ${name}`);
    }
  }
  return found;
};

/**
 * A log of `events` turn/start lines, its last turn left open.
 *
 * @param id The session id.
 * @param version The header's format version.
 * @param events How many events.
 * @returns The file's text.
 */
export const largeLog = (
  id: string,
  version: number,
  events: number,
): string => {
  const lines = [
    `{"type":"session","version":${version},"id":${
      JSON.stringify(id)
    },"createdAt":0,"isSeeded":false}`,
  ];
  for (let seq = 0; seq < events; seq++) {
    lines.push(
      `{"type":"turn/start","seq":${seq},"time":${seq},"data":{"turn":${seq}}}`,
    );
  }
  return `${lines.join("\n")}\n`;
};
