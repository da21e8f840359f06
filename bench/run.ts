/**
 * `deno task bench`: the standard-workload benchmark of docs/performance.md. Every
 * measurement runs in its own process (`bench/measure.ts`), then one table
 * prints each figure with the ratio it is judged by and the target.
 *
 * `--quick` measures 10k/100k instead of 100k/1M (for a smoke run);
 * `--chart` also measures replay and derive at more sizes and writes
 * `docs/performance.svg` (time per event against log size, ours beside the
 * baseline). Raw results go to `.tmp/bench/results.json`.
 *
 * @module
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { runDeno } from "./common.ts";

const quick = Deno.args.includes("--quick");
const chart = Deno.args.includes("--chart");
const SMALL = quick ? 10_000 : 100_000;
const LARGE = quick ? 100_000 : 1_000_000;

interface Measured {
  readonly name: string;
  readonly size: number;
  readonly value: number;
  readonly unit: string;
  readonly nodes?: number;
  readonly peakKiB?: number;
  readonly heapBytes?: number;
}

const here = path.dirname(new URL(import.meta.url).pathname);
const results: Measured[] = [];

const measure = (name: string, size: number): Measured => {
  const output = runDeno(
    ["-A", "--v8-flags=--expose-gc,--max-old-space-size=8192"],
    path.join(here, "measure.ts"),
    [name, String(size)],
  );
  const text = new TextDecoder().decode(output.stdout).trim();
  const last = text.split("\n").pop() ?? "";
  if (!output.success || last === "") {
    throw new Error(`Benchmark "${name} ${size}" failed`);
  }
  const parsed: Measured = JSON.parse(last);
  results.push(parsed);
  Deno.stderr.writeSync(
    new TextEncoder().encode(
      `  ${name} ${size}: ${parsed.value.toFixed(2)} ${parsed.unit}\n`,
    ),
  );
  return parsed;
};

const perEvent = (m: Measured): number => (m.value * 1000) / m.size;
const f2 = (n: number): string => n.toFixed(2);
const k = (n: number): string =>
  n >= 1_000_000 ? `${n / 1_000_000}M` : `${n / 1000}k`;

/** One case at both sizes, small then large. */
const atBothSizes = (name: string): [Measured, Measured] => [
  measure(name, SMALL),
  measure(name, LARGE),
];

console.error("measuring (each case in its own process)...");
const parse = atBothSizes("parse");
const decode = atBothSizes("decode");
const replay = atBothSizes("replay");
const baseReplay = atBothSizes("baseline-replay");
const fold = atBothSizes("fold");
const replace = atBothSizes("replace");
const baseReplace = atBothSizes("baseline-replace");
const derive = atBothSizes("derive");
const baseDerive = atBothSizes("baseline-derive");
const deriveAgain = atBothSizes("derive-again");
const deriveAppend = atBothSizes("derive-after-append");
const eventsTail = atBothSizes("events-tail");
measure("prepare", LARGE);
const idle = measure("idle", 0);
const loadParse = measure("load-parse", LARGE);
const load = measure("load", LARGE);

const rows: string[][] = [];
const row = (...cells: string[]) => rows.push(cells);
const verdict = (ok: boolean): string => ok ? "met" : "NOT MET";

for (const [i, size] of [SMALL, LARGE].entries()) {
  const p = parse[i];
  const d = decode[i];
  const r = replay[i];
  const b = baseReplay[i];
  if (
    p === undefined || d === undefined || r === undefined || b === undefined
  ) continue;
  row(
    `JSON.parse of the lines, ${k(size)} events`,
    `${f2(perEvent(p))} µs/event`,
    "1.00× (reference)",
    "",
    "",
  );
  row(
    `decode (parse + decode), ${k(size)}`,
    `${f2(perEvent(d))} µs/event`,
    `${f2(d.value / p.value)}× JSON.parse`,
    "",
    "",
  );
  row(
    `replay (parse + decode + fold), ${k(size)}`,
    `${f2(perEvent(r))} µs/event`,
    `${f2(r.value / p.value)}× JSON.parse`,
    `≤ 3× — ${verdict(r.value / p.value <= 3)}`,
    `baseline ${f2(perEvent(b))} µs/event (${f2(b.value / r.value)}× ours)`,
  );
}
for (const [i, size] of [SMALL, LARGE].entries()) {
  const f = fold[i];
  if (f === undefined) continue;
  row(
    `fold of pre-decoded events, ${k(size)}`,
    `${f2(perEvent(f))} µs/event`,
    "",
    `≤ 1 µs — ${verdict(perEvent(f) <= 1)}`,
    "",
  );
}
const [rs, rl] = replace;
const [bs, bl] = baseReplace;
if (
  rs !== undefined && rl !== undefined && bs !== undefined && bl !== undefined
) {
  row(
    `one replace (prune), ${k(rs.nodes ?? SMALL)} nodes`,
    `${f2(rs.value)} µs`,
    "",
    `≤ 10 µs — ${verdict(rs.value <= 10)}`,
    `baseline ${f2(bs.value)} µs`,
  );
  row(
    `one replace (prune), ${k(rl.nodes ?? LARGE)} nodes`,
    `${f2(rl.value)} µs`,
    `${f2(rl.value / rs.value)}× the ${k(SMALL)} figure`,
    `≤ 10 µs, flat — ${verdict(rl.value <= 10 && rl.value / rs.value < 2)}`,
    `baseline ${f2(bl.value)} µs (${f2(bl.value / bs.value)}× its ${
      k(SMALL)
    } figure)`,
  );
}
const [ds, dl] = derive;
const [bds, bdl] = baseDerive;
if (
  ds !== undefined && dl !== undefined && bds !== undefined && bdl !== undefined
) {
  row(
    `deriveMessages (first time), ${k(SMALL)} nodes`,
    `${f2(ds.value)} ms`,
    "",
    `≤ 5 ms — ${verdict(ds.value <= 5)}`,
    `baseline ${f2(bds.value)} ms`,
  );
  row(
    `deriveMessages (first time), ${k(LARGE)} nodes`,
    `${f2(dl.value)} ms`,
    `${f2(dl.value / ds.value)}× the ${k(SMALL)} figure`,
    "",
    `baseline ${f2(bdl.value)} ms`,
  );
}
for (const [i, size] of [SMALL, LARGE].entries()) {
  const again = deriveAgain[i];
  const append = deriveAppend[i];
  if (again === undefined || append === undefined) continue;
  row(
    `deriveMessages again, unchanged surface, ${k(again.nodes ?? size)} nodes`,
    `${f2(again.value)} µs`,
    "",
    `≤ 1 µs — ${verdict(again.value <= 1)}`,
    "",
  );
  row(
    `deriveMessages after one appended cycle, ${k(append.nodes ?? size)} nodes`,
    `${f2(append.value)} µs`,
    "",
    "",
    "",
  );
}
const [ts, tl] = eventsTail;
if (ts !== undefined && tl !== undefined) {
  for (const [m, size] of [[ts, SMALL], [tl, LARGE]] as const) {
    row(
      `Session.events from the last seq, ${k(size)} events`,
      `${f2(m.value)} µs`,
      m === tl ? `${f2(tl.value / ts.value)}× the ${k(SMALL)} figure` : "",
      m === tl ? `O(returned): flat — ${verdict(tl.value / ts.value < 2)}` : "",
      "",
    );
  }
}
const [r0, r1] = replay;
if (r0 !== undefined && r1 !== undefined) {
  const growth = r1.value / r0.value;
  row(
    `replay growth, ${k(LARGE)} vs ${k(SMALL)}`,
    `${f2(growth)}×`,
    `${f2(growth / (LARGE / SMALL))}× linear`,
    `≤ 11× — ${verdict(growth <= 11)}`,
    "",
  );
}
const base = idle.peakKiB ?? 0;
const netLoad = (load.peakKiB ?? 0) - base;
const netParse = (loadParse.peakKiB ?? 0) - base;
row(
  `load a ${k(LARGE)}-event JSONL file (readSessionFile)`,
  `${(load.value / 1000).toFixed(2)} s`,
  `${f2(load.value / loadParse.value)}× read + JSON.parse`,
  "",
  "",
);
row(
  `load peak memory (VmHWM less an idle process)`,
  `${(netLoad / 1024).toFixed(0)} MiB`,
  `${f2(netLoad / netParse)}× the parsed events (${
    (netParse / 1024).toFixed(0)
  } MiB)`,
  `≤ 2× — ${verdict(netLoad / netParse <= 2)}`,
  `idle process ${(base / 1024).toFixed(0)} MiB`,
);

const header = ["what", "figure", "ratio", "target", "beside"];
const table = [header, header.map(() => "---"), ...rows]
  .map((cells) => `| ${cells.join(" | ")} |`).join("\n");
console.log(table);

if (chart) {
  const sizes = quick
    ? [1_000, 10_000, 30_000, 100_000]
    : [10_000, 100_000, 300_000, 1_000_000];
  const series = {
    replay: sizes.map((s) => perEvent(measure("replay", s))),
    baselineReplay: sizes.map((s) => perEvent(measure("baseline-replay", s))),
    derive: sizes.map((s) => {
      const m = measure("derive", s);
      return (m.value * 1000) / (m.nodes ?? s);
    }),
    baselineDerive: sizes.map((s) => {
      const m = measure("baseline-derive", s);
      return (m.value * 1000) / (m.nodes ?? s);
    }),
  };
  const svg = renderChart(sizes, series);
  fs.mkdirSync(path.join(here, "..", "docs"), { recursive: true });
  fs.writeFileSync(path.join(here, "..", "docs", "performance.svg"), svg);
  console.error("wrote docs/performance.svg");
}

fs.mkdirSync(path.join(here, "..", ".tmp", "bench"), { recursive: true });
fs.writeFileSync(
  path.join(here, "..", ".tmp", "bench", "results.json"),
  JSON.stringify(results, null, 2),
);

/** A log-log line chart of µs per event against size, as SVG text. */
function renderChart(
  sizes: ReadonlyArray<number>,
  series: Readonly<Record<string, ReadonlyArray<number>>>,
): string {
  const width = 720;
  const height = 420;
  const margin = { left: 70, right: 190, top: 40, bottom: 50 };
  const all = Object.values(series).flat();
  const minY = Math.min(...all) / 1.5;
  const maxY = Math.max(...all) * 1.5;
  const lx = (s: number) =>
    margin.left +
    ((Math.log10(s) - Math.log10(sizes[0] ?? 1)) /
        (Math.log10(sizes[sizes.length - 1] ?? 10) -
          Math.log10(sizes[0] ?? 1))) *
      (width - margin.left - margin.right);
  const ly = (v: number) =>
    height - margin.bottom -
    ((Math.log10(v) - Math.log10(minY)) /
        (Math.log10(maxY) - Math.log10(minY))) *
      (height - margin.top - margin.bottom);
  const colours: Record<string, string> = {
    replay: "#1f6feb",
    baselineReplay: "#9ecbff",
    derive: "#d1242f",
    baselineDerive: "#ffaba8",
  };
  const labels: Record<string, string> = {
    replay: "replay (ours)",
    baselineReplay: "replay (baseline)",
    derive: "derive per node (ours)",
    baselineDerive: "derive per node (baseline)",
  };
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${margin.left}" y="24" font-size="14">Time per event against log size (log-log)</text>`,
    `<line x1="${margin.left}" y1="${height - margin.bottom}" x2="${
      width - margin.right
    }" y2="${height - margin.bottom}" stroke="black"/>`,
    `<line x1="${margin.left}" y1="${margin.top}" x2="${margin.left}" y2="${
      height - margin.bottom
    }" stroke="black"/>`,
    `<text x="${(width - margin.right + margin.left) / 2}" y="${
      height - 12
    }" text-anchor="middle">events in the log (replay) or surface nodes (derive)</text>`,
    `<text transform="translate(16 ${
      height / 2
    }) rotate(-90)" text-anchor="middle">µs per event or per node</text>`,
  ];
  for (const s of sizes) {
    parts.push(
      `<text x="${lx(s)}" y="${
        height - margin.bottom + 16
      }" text-anchor="middle">${k(s)}</text>`,
    );
  }
  for (
    let e = Math.ceil(Math.log10(minY));
    e <= Math.floor(Math.log10(maxY));
    e++
  ) {
    const v = 10 ** e;
    parts.push(
      `<line x1="${margin.left - 4}" y1="${ly(v)}" x2="${
        width - margin.right
      }" y2="${ly(v)}" stroke="#eee"/>`,
      `<text x="${margin.left - 8}" y="${
        ly(v) + 4
      }" text-anchor="end">${v}</text>`,
    );
  }
  let legend = margin.top;
  for (const [key, values] of Object.entries(series)) {
    const colour = colours[key] ?? "black";
    const points = values.map((v, i) => `${lx(sizes[i] ?? 1)},${ly(v)}`).join(
      " ",
    );
    parts.push(
      `<polyline fill="none" stroke="${colour}" stroke-width="2" points="${points}"/>`,
    );
    for (const [i, v] of values.entries()) {
      parts.push(
        `<circle cx="${lx(sizes[i] ?? 1)}" cy="${
          ly(v)
        }" r="3" fill="${colour}"/>`,
      );
    }
    parts.push(
      `<rect x="${width - margin.right + 16}" y="${
        legend - 9
      }" width="12" height="12" fill="${colour}"/>`,
      `<text x="${width - margin.right + 34}" y="${legend + 1}">${
        labels[key] ?? key
      }</text>`,
    );
    legend += 20;
  }
  parts.push("</svg>");
  return parts.join("\n");
}
