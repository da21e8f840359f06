/**
 * `explain FILE SEQ`: where a node came from and what became of it; for an
 * imported session, `explain FILE --line N` gives the events source line N
 * became (read from the log's `import/lines` event) and where each is. The
 * lineage is the tree of events the node stands for, following
 * `sourceEventSeqs` down to the original events; in a log with rewinds,
 * the branch that holds the event; "shadowed by" is the chain
 * of replacements that took it off the surface, ending at the node that
 * stands for it now.
 *
 * @module
 */
import { branchesOf } from "../../src/history/rewind.ts";
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import { SessionSeq } from "@palimpsest/session";
import type { SessionEvent } from "@palimpsest/session";
import { isSurfaceEvent } from "@palimpsest/session";
import { eventTypeName } from "@palimpsest/session/schema";
import { encodeEvent } from "@palimpsest/session/schema";
import { Session } from "@palimpsest/session";
import {
  applyEventResult,
  emptySurfaceAt,
  surfaceEvent,
} from "../../src/surface/mod.ts";
import { lineage, type LineageNode, partialAnswers } from "@palimpsest/session";
import {
  type Command,
  naturalOrUsage,
  okOutcome,
  usageOutcome,
} from "../outcome.ts";
import { loadOrFail, LOG_POSITIONAL } from "../load.ts";
import { eventLine, partialLine } from "../render.ts";
import { stringOption } from "../args.ts";

/**
 * One event of a lineage as `explain --json` prints it. The lineage is a
 * flat list (the root first, then depth first, each event once) whose
 * `sources` name other entries by seq, so a history thousands of
 * replacements deep is not a document thousands of levels deep.
 */
export interface LineageEntry {
  /** The event's seq. */
  readonly seq: number;
  /** The event's type, or null for a source before the log's window. */
  readonly type: string | null;
  /** The seqs it cites, in order. */
  readonly sources: ReadonlyArray<number>;
}

/** Flattens a lineage tree, depth first, each event once; iterative. */
const flatten = (root: LineageNode): ReadonlyArray<LineageEntry> => {
  const out: LineageEntry[] = [];
  const seen = new Set<number>();
  const stack: LineageNode[] = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (seen.has(node.seq)) continue;
    seen.add(node.seq);
    out.push({
      seq: node.seq,
      type: node.event === undefined ? null : eventTypeName(node.event),
      sources: node.sources.map((s) => s.seq),
    });
    for (let i = node.sources.length - 1; i >= 0; i--) {
      const child = node.sources[i];
      if (child !== undefined) stack.push(child);
    }
  }
  return out;
};

/** The most lineage lines and chain links the text output shows. */
const MAX_TREE_LINES = 60;
const MAX_CHAIN_LINKS = 12;

/**
 * The lineage as an indented tree, depth first, at most
 * {@link MAX_TREE_LINES} lines (a long history is summarised, `--json` has
 * all of it). Iterative: lineages of repeated compactions nest thousands
 * deep.
 */
const treeLines = (
  entries: ReadonlyArray<LineageEntry>,
  session: Session,
): string[] => {
  const out: string[] = [];
  const root = entries[0];
  if (root === undefined) return out;
  const bySeq = new Map(entries.map((e) => [e.seq, e]));
  const printed = new Set<number>();
  const stack: Array<{ seq: number; prefix: string; branch: string }> = [
    { seq: root.seq, prefix: "  ", branch: "" },
  ];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    if (out.length >= MAX_TREE_LINES) break;
    const { seq, prefix, branch } = item;
    const event = Result.getOrThrow(
      Session.eventAt(session, SessionSeq.make(seq)),
    );
    const label = event === undefined
      ? `seq ${seq} (before this log's window)`
      : eventLine(event, 80);
    const repeated = printed.has(seq);
    printed.add(seq);
    out.push(`${prefix}${branch}${label}${repeated ? " (see above)" : ""}`);
    if (repeated) continue;
    const children = bySeq.get(seq)?.sources ?? [];
    const childPrefix = branch === ""
      ? prefix
      : `${prefix}${branch === "└─ " ? "   " : "│  "}`;
    for (let i = children.length - 1; i >= 0; i--) {
      const child = children[i];
      if (child === undefined) continue;
      stack.push({
        seq: child,
        prefix: childPrefix,
        branch: i === children.length - 1 ? "└─ " : "├─ ",
      });
    }
  }
  const left = entries.length - printed.size;
  if (left > 0) {
    out.push(
      `  … ${left} more events in the lineage; --json prints all of them`,
    );
  }
  return out;
};

/**
 * The chain of replacements that took `seq` off the surface, then its
 * replacement off, and so on, in one fold of the log. Adapter: following
 * `shadowedBy` link by link replays the log once per link, which on a long
 * log with repeated compactions is quadratic.
 */
const shadowChain = (
  events: ReadonlyArray<SessionEvent>,
  base: SessionSeq,
  seq: SessionSeq,
): ReadonlyArray<SessionSeq> => {
  const chain: SessionSeq[] = [];
  let target = seq;
  let surface = emptySurfaceAt(base);
  for (const event of events) {
    const watched = event.seq > target && isSurfaceEvent(event) &&
      typeof event.surfaceOp === "object" &&
      surfaceEvent(surface, target) !== undefined;
    const next = applyEventResult(surface, event, { stored: true });
    if (next._tag === "Failure") break;
    surface = next.success;
    if (watched && surfaceEvent(surface, target) === undefined) {
      chain.push(event.seq);
      target = event.seq;
    }
  }
  return chain;
};

/** The source line of every seq, from an imported log's `import/lines` event. */
const importLines = (
  events: ReadonlyArray<SessionEvent>,
):
  | { readonly from: string; readonly lines: ReadonlyArray<unknown> }
  | undefined => {
  for (let i = events.length - 1; i >= 0; i--) {
    const event = events[i];
    if (event === undefined || eventTypeName(event) !== "import/lines") {
      continue;
    }
    const data: unknown = event.data;
    if (typeof data !== "object" || data === null) return undefined;
    const lines: unknown = Reflect.get(data, "lines");
    const from: unknown = Reflect.get(data, "from");
    return Array.isArray(lines)
      ? { from: typeof from === "string" ? from : "unknown", lines }
      : undefined;
  }
  return undefined;
};

/** `explain FILE --line N`: the events a source line became. */
const explainLine = (
  file: string,
  text: string,
  io: Parameters<Command["run"]>[1],
) =>
  Effect.gen(function* () {
    const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (!Number.isSafeInteger(n) || n < 1) {
      return usageOutcome(
        `Expected --line to be a line number (1 or more) but found "${text}"`,
      );
    }
    const result = yield* loadOrFail(file, io);
    if (result._tag === "Failure") return result.failure;
    const { session, events } = result.success;
    const origin = importLines(events);
    if (origin === undefined) {
      return usageOutcome(
        `Expected "${file}" to be an imported session (with an import/lines event) for --line`,
      );
    }
    const became = events.filter((e) => origin.lines[e.seq] === n);
    const entries = became.map((e) => ({
      seq: e.seq,
      type: eventTypeName(e),
      onSurface: surfaceEvent(session.surface, e.seq) !== undefined,
    }));
    const json = { from: origin.from, line: n, events: entries };
    const lines = [
      `${origin.from} line ${n} became ${
        became.length === 1 ? "1 event" : `${became.length} events`
      }${became.length === 0 ? " (the import report says why)" : ":"}`,
      ...became.map((e) =>
        `  ${eventLine(e, 80)}${
          !isSurfaceEvent(e)
            ? ""
            : surfaceEvent(session.surface, e.seq) !== undefined
            ? " (on the surface)"
            : " (off the surface)"
        }`
      ),
    ];
    return okOutcome(json, lines);
  });

/** The `explain` command. */
export const explainCommand: Command = {
  spec: {
    name: "explain",
    summary: "show a node's lineage and what shadows it",
    description:
      "Reads and folds FILE and explains the event SEQ: whether it is on the\n" +
      "surface, the chain of replacements that shadowed it (ending at the node\n" +
      "that stands for it now), and its lineage: the tree of events it stands\n" +
      "for, following sourceEventSeqs down to the original events. For an\n" +
      "imported session, --line N lists the events source line N became.",
    positionals: [
      LOG_POSITIONAL,
      {
        name: "SEQ",
        summary: "the seq of the event to explain (not with --line)",
        optional: true,
      },
    ],
    options: [
      stringOption(
        "line",
        "N",
        "for an imported session: the events source line N became, and where they are",
      ),
    ],
  },
  run: (args, io) =>
    Effect.gen(function* () {
      const file = args.positionals[0] ?? "";
      const line = args.values.get("line");
      if (line !== undefined) {
        if (args.positionals.length > 1) {
          return usageOutcome("Expected either SEQ or --line N, not both");
        }
        return yield* explainLine(file, line, io);
      }
      const text = args.positionals[1] ?? "";
      const n = naturalOrUsage("SEQ", text);
      if (typeof n !== "number") return n;
      const result = yield* loadOrFail(file, io);
      if (result._tag === "Failure") return result.failure;
      const session = result.success.session;
      const seq = SessionSeq.make(n);
      // The whole log was read: every event is held.
      const event: SessionEvent | undefined = Result.getOrThrow(
        Session.eventAt(session, seq),
      );
      const tree = Result.getOrThrow(lineage(session, seq));
      if (event === undefined || tree === undefined) {
        const last = Session.nextSeq(session) - 1;
        return usageOutcome(
          last < session.surface.baseSeq
            ? `Seq "${n}" is not in the log: it has no events`
            : `Seq "${n}" is not in the log; choose one from "${session.surface.baseSeq}" to "${last}"`,
        );
      }
      const onSurface = surfaceEvent(session.surface, seq) !== undefined;
      const chain = shadowChain(
        result.success.events,
        session.surface.baseSeq,
        seq,
      );
      const lineageJson = flatten(tree);
      // In a log with rewinds, the branch that holds the event.
      const list = branchesOf(result.success.events);
      const branch = list.length < 2
        ? undefined
        : list.find((b) => b.fromSeq <= n && n <= b.tipSeq);
      const json = {
        seq: n,
        type: event.type,
        surfaceEvent: isSurfaceEvent(event),
        onSurface,
        shadowedBy: chain,
        ...(branch === undefined ? {} : {
          branch: {
            fromSeq: branch.fromSeq,
            tipSeq: branch.tipSeq,
            current: branch.current,
          },
        }),
        event: encodeEvent(event),
        lineage: lineageJson,
      };
      const lines = [eventLine(event, 100)];
      if (event.type === "assistant/partial") {
        lines.push("a log-only event: it never joins the surface");
        const answer = partialAnswers(result.success.events).find((a) =>
          a.seqs.includes(event.seq)
        );
        lines.push(
          answer === undefined
            ? "a batch of an answer that settled: its assistant/message or assistant/attempt embeds the whole stream"
            : `a batch of a ${partialLine(answer, 100)}`,
        );
      } else if (!isSurfaceEvent(event)) {
        lines.push("a log-only event: it never joins the surface");
      } else if (onSurface) {
        lines.push("on the surface");
      } else if (chain.length === 0) {
        lines.push("off the surface");
      } else {
        lines.push("off the surface, shadowed by:");
        const shown = chain.length <= MAX_CHAIN_LINKS
          ? chain
          : [...chain.slice(0, 3), undefined, ...chain.slice(-3)];
        for (const at of shown) {
          if (at === undefined) {
            lines.push(`  … ${chain.length - 6} more replacements …`);
            continue;
          }
          const by = Result.getOrThrow(Session.eventAt(session, at));
          const current = surfaceEvent(session.surface, at) !== undefined;
          lines.push(
            `  ${by === undefined ? `seq ${at}` : eventLine(by, 80)}${
              current ? " (on the surface)" : ""
            }`,
          );
        }
      }
      if (branch !== undefined) {
        lines.push(
          `on the branch ${branch.fromSeq}..${branch.tipSeq}${
            branch.current ? " (current)" : ` (not current; "branches FILE")`
          }`,
        );
      }
      lines.push("lineage:");
      for (const line of treeLines(lineageJson, session)) lines.push(line);
      return okOutcome(json, lines);
    }),
};
