/**
 * Import speed (docs/importing.md): events per second when importing a session file
 * written by another tool, against `JSON.parse` of the same file's lines.
 *
 * As a script, `deno run -A bench/import_bench.ts [--from TOOL FILE] [runs]`
 * (default: the largest study file in `../shared/peer-logs/`, 10 runs) times
 * both in one process, best run of each: `JSON.parse` of every line of the
 * file (the text already in memory), and `importSession` of the file (which
 * also reads it, pairs, folds and checks every event). It prints lines and
 * events per second and the ratio.
 *
 * Under `deno bench` it times the import of the pi fixture with a
 * compaction.
 *
 * @module
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { Effect } from "effect";
import {
  importSession,
  type SourceTool,
  sourceTools,
} from "../src/import/mod.ts";
import { best } from "./common.ts";

const repo = fileURLToPath(new URL("../", import.meta.url));

const largestStudyFile = (): { from: SourceTool; file: string } => {
  const candidates = [
    path.join(repo, "..", "shared", "peer-logs"),
    path.join(repo, "..", "..", "shared", "peer-logs"),
  ];
  const base = candidates.find((c) => fs.existsSync(c));
  if (base === undefined) {
    throw new Error("no study logs beside the repository");
  }
  let best: { from: SourceTool; file: string; size: number } | undefined;
  for (const from of ["pi", "claude-code", "codex"] as const) {
    const dir = path.join(base, from);
    for (const name of fs.readdirSync(dir)) {
      if (!name.endsWith(".jsonl")) continue;
      const file = path.join(dir, name);
      const size = fs.statSync(file).size;
      if (best === undefined || size > best.size) best = { from, file, size };
    }
  }
  if (best === undefined) throw new Error("no study logs found");
  return best;
};

if (import.meta.main) {
  const at = Deno.args.indexOf("--from");
  const named = sourceTools.find((tool) => tool === Deno.args[at + 1]);
  const source = at === -1 || named === undefined
    ? largestStudyFile()
    : { from: named, file: Deno.args[at + 2] ?? "" };
  const runsArg = Deno.args.find((a) => /^\d+$/.test(a));
  const runs = runsArg === undefined ? 10 : Number(runsArg);
  const text = fs.readFileSync(source.file, "utf8");
  const lines = text.split("\n").filter((l) => l !== "");
  let sink = 0;
  const parseMs = best(runs, () => {
    for (const line of lines) sink += JSON.parse(line) === null ? 0 : 1;
  });
  let events = 0;
  const importMs = best(runs, () => {
    const imported = Effect.runSync(
      importSession(source.file, { from: source.from }),
    );
    events = imported.report.events;
  });
  const mb = text.length / 1e6;
  console.log(
    `file: ${source.file} (${source.from}, ${
      mb.toFixed(2)
    } MB, ${lines.length} lines -> ${events} events)\n` +
      `JSON.parse of its lines: ${parseMs.toFixed(1)} ms (${
        Math.round(lines.length / parseMs * 1000)
      } lines/s)\n` +
      `import: ${importMs.toFixed(1)} ms (${
        Math.round(events / importMs * 1000)
      } events/s, ${Math.round(lines.length / importMs * 1000)} lines/s)\n` +
      `ratio import / JSON.parse: ${
        (importMs / parseMs).toFixed(2)
      }x (best of ${runs} runs; sink ${sink > 0})`,
  );
} else {
  const fixture = fileURLToPath(
    new URL("../tests/fixtures/import/pi/v1-compaction.jsonl", import.meta.url),
  );
  Deno.bench("import a pi file with a compaction", () => {
    Effect.runSync(importSession(fixture, { from: "pi" }));
  });
}
