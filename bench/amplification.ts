/**
 * `deno task bench:amplification`: peak memory and time of `verify` on the
 * amplification inputs of `docs/reliability.md` (small files whose numbers
 * ask for huge allocations), judged against the goal of under 100 MB and
 * under 1 s each.
 *
 * Each input is written to a temporary file and verified by the real command
 * line (`cli/main.ts verify FILE --json`) in its own process, under GNU
 * `/usr/bin/time` for the peak resident set size, three times (the median is
 * printed). A one-event log gives the process's own baseline. The time is
 * the library's own cost: `readSessionFile` on the same file in this
 * process, best of three, since a process's start-up alone varies with the
 * machine's load.
 *
 * @module
 */
import { readSessionFile } from "@palimpsest/session/jsonl";
import { Effect } from "effect";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  HEADER,
  inputs,
  verifyProcess,
} from "../tests/_helpers/amplification_inputs.ts";

const TIME = "/usr/bin/time";
const GOAL_MB = 100;
const GOAL_MS = 1000;

interface Run {
  readonly rssMb: number;
  readonly outcome: string;
}

/** One `verify` process: its peak RSS and what it reported. */
const verify = (file: string): Run => {
  const output = verifyProcess(file, { wrapper: [TIME, "-f", "%M"] });
  const stderr = new TextDecoder().decode(output.stderr).trim().split("\n");
  const kb = Number(stderr[stderr.length - 1]);
  const report = JSON.parse(new TextDecoder().decode(output.stdout));
  const error = report?.error;
  const outcome = error === undefined
    ? "valid"
    : `${error.tag}${
      error.problem === undefined ? "" : ` ${error.problem}`
    }, line ${error.line}`;
  return { rssMb: kb / 1024, outcome };
};

const median = (xs: ReadonlyArray<number>): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
};

/** The library's own time on the file: `readSessionFile`, best of three. */
const readMs = async (file: string): Promise<number> => {
  let best = Infinity;
  for (let i = 0; i < 3; i++) {
    const start = performance.now();
    await Effect.runPromise(Effect.result(readSessionFile(file)));
    best = Math.min(best, performance.now() - start);
  }
  return best;
};

if (!fs.existsSync(TIME)) {
  console.error(`${TIME} (GNU time) is needed to measure peak memory`);
  Deno.exit(2);
}
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "amplification-bench-"));
const rows: string[] = [];
let baseline = NaN;
let within = true;
try {
  for (const [name, lines] of inputs) {
    const file = path.join(dir, "input.jsonl");
    fs.writeFileSync(file, `${[HEADER, ...lines()].join("\n")}\n`);
    const bytes = fs.statSync(file).size;
    const runs = [verify(file), verify(file), verify(file)];
    const rss = median(runs.map((r) => r.rssMb));
    if (Number.isNaN(baseline)) baseline = rss;
    const ms = await readMs(file);
    const ok = rss < GOAL_MB && ms < GOAL_MS;
    within &&= ok;
    rows.push(
      `| ${name} | ${bytes.toLocaleString("en")} | ${runs[0]?.outcome} | ${
        rss.toFixed(0)
      } MB | ${(rss - baseline).toFixed(0)} MB | ${ms.toFixed(0)} ms | ${
        ok ? "yes" : "NO"
      } |`,
    );
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
console.log(`load average: ${os.loadavg().map((l) => l.toFixed(2)).join(" ")}`);
console.log(
  `| input | bytes | outcome | peak RSS (median of 3) | over the baseline | readSessionFile (best of 3) | under ${GOAL_MB} MB and ${GOAL_MS} ms |`,
);
console.log("| --- | ---: | --- | ---: | ---: | ---: | --- |");
for (const row of rows) console.log(row);
console.log(
  within ? "every input within the goal" : "an input is over the goal",
);
