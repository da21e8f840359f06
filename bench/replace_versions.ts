/**
 * A replace through `Session.append` on several checkouts of the library,
 * each in its own process, the processes alternating:
 *
 * ```sh
 * deno run -A --v8-flags=--expose-gc bench/replace_versions.ts \
 *   <events> <processes> <checkout>...
 * ```
 *
 * In each process one checkout's `mod.ts` builds a session the same way
 * (`Session.append` of the standard cycles: a user message, an assistant
 * message with one tool call, the call and its result, `events / 4` times),
 * then runs five chains of 1,000 prunes (`pruneToolResult`'s draft: a tool
 * result with its block's content replaced) and five of 1,000 replaces of 4
 * nodes by a summary message (a compaction's), spread evenly over the
 * surface, each chain from the built session, each append timed alone. A
 * process reports the median append of each chain and the median of those;
 * this prints each checkout's median and range over its processes, and its
 * time over the first checkout's, alternation by alternation.
 *
 * Only `Session.make`, `Session.append`, `Session.eventAt` and a surface's
 * `replacements` are used, so any version since 0.2 can be measured. It is
 * not part of the package.
 *
 * @module
 */
import { Effect } from "effect";
import * as path from "node:path";
import {
  cycleData,
  mulberry32,
  wordsFrom,
} from "../tests/_helpers/workload.ts";
import { median, timeEach } from "./timing.ts";

interface Figures {
  readonly prune: number;
  readonly compaction: number;
}

/** The part of a checkout's API the measurement uses. */
interface Api {
  readonly Session: {
    readonly make: (header: object) => unknown;
    readonly append: (
      session: unknown,
      draft: object,
    ) => Effect.Effect<unknown, unknown>;
    readonly eventAt: (session: unknown, seq: number) => unknown;
  };
}

type Raw = Record<string, unknown>;

const replacementsOf = (session: unknown): number =>
  Number(Object(Object(session).surface).replacements);

/** The standard cycles as drafts: made anew for each checkout. */
const cycleDrafts = (count: number): Raw[] => {
  const words = wordsFrom(mulberry32(1));
  const out: Raw[] = [];
  for (let cycle = 0; cycle < count; cycle++) {
    const data = cycleData(cycle, {
      user: words(24),
      assistant: words(20),
      result: words(30),
    });
    const seq = 4 * cycle;
    out.push(
      { type: "user/message", surfaceOp: "append", data: data.user },
      { type: "assistant/message", surfaceOp: "append", data: data.assistant },
      { type: "tool/call", data: data.call },
      {
        type: "tool/result",
        surfaceOp: "append",
        sourceEventSeqs: [seq + 2],
        data: data.result,
      },
    );
  }
  return out;
};

const measureChild = async (events: number, root: string): Promise<void> => {
  const api: Api = await import(
    new URL(`file://${path.resolve(root)}/mod.ts`).href
  );
  const { Session } = api;
  const cycles = Math.floor(events / 4);
  let base = Session.make({ id: "b", createdAt: 0, isSeeded: false });
  for (const draft of cycleDrafts(cycles)) {
    base = Effect.runSync(Session.append(base, draft));
  }
  const ops = 1000;
  const stride = Math.max(2, Math.floor(cycles / ops));
  const prunes: Raw[] = [];
  const compactions: Raw[] = [];
  for (let c = 0; c + 1 < cycles && prunes.length < ops; c += stride) {
    // Cycle c's result is seq 4c + 3; cycle c + 1's nodes 4c + 4 to 4c + 7.
    const target = Object(Session.eventAt(base, 4 * c + 3));
    const message = target.data.message;
    const [block] = message.content;
    prunes.push({
      type: "tool/result",
      surfaceOp: { op: "replace", startSeq: target.seq, endSeq: target.seq },
      sourceEventSeqs: [target.seq],
      data: {
        ...target.data,
        message: {
          ...message,
          content: [{ ...block, content: [{ type: "text", text: "pruned" }] }],
        },
      },
    });
    const first = 4 * c + 4;
    compactions.push({
      type: "user/message",
      surfaceOp: { op: "replace", startSeq: first, endSeq: first + 4 },
      sourceEventSeqs: [first, first + 1, first + 3, first + 4],
      data: {
        id: `summary-${c}`,
        role: "user",
        content: [{ type: "text", text: "a summary of four messages" }],
        source: { kind: "plugin", plugin: "compaction" },
      },
    });
  }
  const chain = (drafts: ReadonlyArray<Raw>): number => {
    // Going back to the built session (rerooting its store) is not timed.
    Session.eventAt(base, 0);
    const { last, times } = timeEach(
      base,
      drafts,
      (session, draft) => Effect.runSync(Session.append(session, draft)),
    );
    if (replacementsOf(last) !== replacementsOf(base) + drafts.length) {
      throw new Error("Expected every replace to land");
    }
    return median(times) * 1000;
  };
  const prune: number[] = [];
  const compaction: number[] = [];
  for (let round = 0; round < 5; round++) {
    prune.push(chain(prunes));
    compaction.push(chain(compactions));
  }
  const figures: Figures = {
    prune: median(prune),
    compaction: median(compaction),
  };
  console.log(JSON.stringify(figures));
};

const range = (xs: ReadonlyArray<number>, digits: number): string =>
  `${median(xs).toFixed(digits)} (${Math.min(...xs).toFixed(digits)}–${
    Math.max(...xs).toFixed(digits)
  })`;

const load = (): string =>
  Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");

const measureAll = (
  events: number,
  processes: number,
  roots: ReadonlyArray<string>,
): void => {
  const config = path.join(import.meta.dirname ?? ".", "..", "deno.json");
  const runs = new Map<string, Figures[]>(roots.map((root) => [root, []]));
  const loads: string[] = [load()];
  for (let p = 0; p < processes; p++) {
    const order = p % 2 === 0 ? roots : [...roots].reverse();
    for (const root of order) {
      const output = new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          "--config",
          config,
          "--v8-flags=--expose-gc",
          import.meta.filename ?? "",
          "--child",
          String(events),
          root,
        ],
        stdout: "piped",
        stderr: "inherit",
      }).outputSync();
      if (!output.success) throw new Error(`The run of ${root} failed`);
      const line = new TextDecoder().decode(output.stdout).trim();
      runs.get(root)?.push(JSON.parse(line));
    }
    loads.push(load());
  }
  console.log(`${events} events, ${processes} processes a checkout`);
  console.log(`load average (1, 5, 15 min) after each round: ${loads}`);
  const first = runs.get(roots[0] ?? "") ?? [];
  for (const root of roots) {
    const figures = runs.get(root) ?? [];
    const ratio = (key: keyof Figures): number[] =>
      figures.map((f, i) => f[key] / (first[i]?.[key] ?? NaN));
    console.log(
      `${root}: prune ${range(figures.map((f) => f.prune), 2)} µs, ` +
        `compaction of 4 ${range(figures.map((f) => f.compaction), 2)} µs; ` +
        `time over ${roots[0]}'s: prune ${range(ratio("prune"), 3)}, ` +
        `compaction ${range(ratio("compaction"), 3)}`,
    );
  }
};

if (Deno.args[0] === "--child") {
  await measureChild(Number(Deno.args[1]), Deno.args[2] ?? ".");
} else {
  const [events = "100000", processes = "3", ...roots] = Deno.args;
  measureAll(
    Number(events),
    Number(processes),
    roots.length > 0 ? roots : ["."],
  );
}
