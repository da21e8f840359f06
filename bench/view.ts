/// <reference lib="dom" />
/**
 * `deno task bench:view [EVENTS...]`: how long the view takes to render the
 * standard workload and how long a browser takes to open the page, at each
 * size (100k and 1M events by default).
 *
 * For each size, in its own process: write the workload log, load it, write
 * the page to a file chunk by chunk (the render time and the page size),
 * then open it in Debian's chromium (headless, fresh profile, the page from
 * a file) and wait for the load event and two animation frames, i.e. until
 * the first screen is drawn (the open time). Also the CPU time all the
 * browser's processes spent over that span (from `/proc`): the work, without
 * the waiting for a core that a loaded machine adds. Figures print as a
 * table.
 *
 * @module
 */
import { readSessionFile } from "@palimpsest/session/jsonl";
import { writeSessionHtml } from "@palimpsest/session/view";
import { Effect } from "effect";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { chromium } from "playwright-core";
import { writeWorkloadFile } from "../tests/_helpers/workload.ts";
import { runDeno } from "./common.ts";

interface Figures {
  readonly events: number;
  readonly logBytes: number;
  readonly loadMs: number;
  readonly renderMs: number;
  readonly pageBytes: number;
  readonly openMs: number;
  /** CPU time all of the browser's processes spent while opening. */
  readonly cpuMs: number;
}

/**
 * CPU milliseconds (user + system) used so far by the processes whose
 * command line names `profile`: one browser's processes. Linux only.
 */
const browserCpuMs = (profile: string): number => {
  let ticks = 0;
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (!cmdline.includes(profile)) continue;
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      // Fields after the command name, which is in parentheses.
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // The process ended between the listing and the read.
    }
  }
  // Linux reports in clock ticks of 1/100 s.
  return ticks * 10;
};

const one = async (events: number): Promise<Figures> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-view-"));
  try {
    const log = path.join(dir, "log.jsonl");
    const page = path.join(dir, "page.html");
    const logBytes = writeWorkloadFile(log, events);
    let t = performance.now();
    const loaded = await Effect.runPromise(readSessionFile(log));
    const loadMs = performance.now() - t;
    t = performance.now();
    const fd = fs.openSync(page, "w");
    let pageBytes = 0;
    writeSessionHtml(loaded.session, (chunk) => {
      pageBytes += fs.writeSync(fd, chunk);
    });
    fs.closeSync(fd);
    const renderMs = performance.now() - t;
    const profile = path.join(dir, "profile");
    const context = await chromium.launchPersistentContext(profile, {
      executablePath: "/usr/bin/chromium",
      args: [
        "--headless",
        "--no-sandbox",
        "--disable-background-networking",
        "--disable-component-update",
      ],
      viewport: { width: 1200, height: 900 },
    });
    try {
      const tab = await context.newPage();
      const cpu0 = browserCpuMs(profile);
      t = performance.now();
      await tab.goto(`file://${page}`, { waitUntil: "load", timeout: 0 });
      await tab.evaluate(() =>
        new Promise((done) =>
          requestAnimationFrame(() => requestAnimationFrame(done))
        )
      );
      const openMs = performance.now() - t;
      const cpuMs = browserCpuMs(profile) - cpu0;
      return {
        events,
        logBytes,
        loadMs,
        renderMs,
        pageBytes,
        openMs,
        cpuMs,
      };
    } finally {
      await context.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
};

const child = Deno.args[0] === "--one";
if (child) {
  console.log(JSON.stringify(await one(Number(Deno.args[1]))));
} else {
  const sizes = Deno.args.length > 0
    ? Deno.args.map(Number)
    : [100_000, 1_000_000];
  const mib = (n: number) => (n / (1024 * 1024)).toFixed(1);
  const rows: string[] = [];
  for (const events of sizes) {
    const output = runDeno(
      ["-A", "--v8-flags=--max-old-space-size=8192"],
      new URL(import.meta.url).pathname,
      ["--one", String(events)],
    );
    if (!output.success) throw new Error(`The ${events}-event run failed`);
    const f: Figures = JSON.parse(new TextDecoder().decode(output.stdout));
    rows.push(
      `| ${f.events.toLocaleString("en-US")} | ${mib(f.logBytes)} MiB | ${
        (f.loadMs / 1000).toFixed(2)
      } s | ${(f.renderMs / 1000).toFixed(2)} s | ${mib(f.pageBytes)} MiB | ${
        (f.openMs / 1000).toFixed(2)
      } s | ${(f.cpuMs / 1000).toFixed(2)} s |`,
    );
  }
  console.log(
    `| events | log | load | render | page | browser open | browser CPU |\n| --- | --- | --- | --- | --- | --- | --- |\n${
      rows.join("\n")
    }`,
  );
  console.log(
    `load average: ${os.loadavg().map((n) => n.toFixed(2)).join(" ")}`,
  );
}
