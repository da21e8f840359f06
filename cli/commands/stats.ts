/**
 * `stats FILE`: events by type, the surface, what each replacement saved,
 * and what the log leaves open (turns and compactions without their end). A replacement's saving is the characters of the nodes it took off
 * the surface minus its own (texts, tool-call names and arguments, texts
 * inside tool results; see {@link messageChars}). Replacements are told
 * apart by the replacing event's type: a `tool/result` is a prune, a
 * `system/message` a system-prompt change, anything else a compaction.
 *
 * @module
 */
import { redactAddress } from "../../src/store/redact.ts";
import type { SessionSeq } from "@palimpsest/session";
import type { SessionEvent } from "@palimpsest/session";
import { isSurfaceEvent } from "@palimpsest/session";
import { eventTypeName } from "@palimpsest/session/schema";
import { deriveMessages } from "@palimpsest/session";
import type { Surface } from "@palimpsest/session";
import {
  applyEventResult,
  emptySurfaceAt,
  surfaceEvent,
} from "../../src/surface/mod.ts";
import { type Command, okOutcome } from "../outcome.ts";
import { logCommand } from "../load.ts";
import { messageChars } from "../../src/history/surface_nodes.ts";
import {
  type ReplacementKind,
  replacementKind,
} from "../../src/history/provenance.ts";
import { count, eventChars, openJson, openPhrases } from "../render.ts";
import { openWork } from "@palimpsest/session";

/** One replacement as `stats` reports it. */
export interface ReplacementStat {
  /** The replacing event's seq. */
  readonly seq: number;
  /** `compaction`, `prune` or `system-prompt`. */
  readonly kind: ReplacementKind;
  /** The nodes it took off the surface. */
  readonly shadowed: ReadonlyArray<number>;
  /** Characters of those nodes. */
  readonly charsBefore: number;
  /** Characters of the replacement. */
  readonly charsAfter: number;
  /** `charsBefore - charsAfter`. */
  readonly charsSaved: number;
}

/** Replays the log and measures every replacement. */
const measure = (
  events: ReadonlyArray<SessionEvent>,
  base: SessionSeq,
): ReadonlyArray<ReplacementStat> => {
  const out: ReplacementStat[] = [];
  let surface: Surface = emptySurfaceAt(base);
  for (const event of events) {
    let candidates: Array<{ seq: SessionSeq; chars: number }> = [];
    const replaces = isSurfaceEvent(event) &&
      typeof event.surfaceOp === "object";
    if (replaces && event.type !== "assistant/message") {
      candidates = (event.sourceEventSeqs ?? []).flatMap((seq) => {
        const node = surfaceEvent(surface, seq);
        return node === undefined ? [] : [{ seq, chars: eventChars(node) }];
      });
    }
    const next = applyEventResult(surface, event, { stored: true });
    // The reader folded these events already; stop where a fold would fail.
    if (next._tag === "Failure") break;
    surface = next.success;
    if (!replaces) continue;
    const shadowed = candidates.filter((c) =>
      surfaceEvent(surface, c.seq) === undefined
    );
    const charsBefore = shadowed.reduce((n, c) => n + c.chars, 0);
    const charsAfter = eventChars(event);
    out.push({
      seq: event.seq,
      kind: replacementKind(event),
      shadowed: shadowed.map((c) => c.seq),
      charsBefore,
      charsAfter,
      charsSaved: charsBefore - charsAfter,
    });
  }
  return out;
};

const group = (
  items: ReadonlyArray<ReplacementStat>,
  kind: ReplacementStat["kind"],
) => {
  const of = items.filter((i) => i.kind === kind);
  return {
    count: of.length,
    shadowedNodes: of.reduce((n, i) => n + i.shadowed.length, 0),
    charsSaved: of.reduce((n, i) => n + i.charsSaved, 0),
    items: of,
  };
};

const num = (n: number): string => n.toLocaleString("en-US");

/**
 * The nodes a replacement shadowed, a run in surface order: its first and
 * last seq and the count (`1..728 (262 nodes)`), never every seq.
 */
export const seqRun = (seqs: ReadonlyArray<number>): string => {
  const first = seqs[0];
  const last = seqs[seqs.length - 1];
  if (first === undefined || last === undefined) return "nothing";
  return `${first === last ? `${first}` : `${first}..${last}`} (${
    count(seqs.length, "node")
  })`;
};

/** The `stats` command. */
export const statsCommand: Command = logCommand(
  {
    name: "stats",
    summary: "count events, surface nodes, compactions and prunes",
    description:
      "Reads and folds FILE and prints the events by type, the surface length,\n" +
      "the replacements, and the compactions and prunes with the characters each\n" +
      "saved (characters of the nodes taken off the surface minus the\n" +
      "replacement's own), the rewinds and the nodes each took off, and the\n" +
      "turns and compactions left open.",
  },
  (log, file) => {
    const surface = log.session.surface;
    const byType: Record<string, number> = {};
    for (const event of log.events) {
      const name = eventTypeName(event);
      byType[name] = (byType[name] ?? 0) + 1;
    }
    const eventsByType = Object.fromEntries(
      Object.entries(byType).sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0),
    );
    const items = measure(log.events, surface.baseSeq);
    const messages = deriveMessages(surface);
    const surfaceChars = messages.reduce((n, m) => n + messageChars(m), 0);
    const compactions = group(items, "compaction");
    const prunes = group(items, "prune");
    const systemPrompts = group(items, "system-prompt");
    const rewinds = group(items, "rewind");
    const open = openWork(log.events);
    const opened = openPhrases(open);
    const json = {
      version: log.version,
      events: log.events.length,
      eventsByType,
      surface: surface.length,
      messages: messages.length,
      surfaceChars,
      replacements: surface.replacements,
      compactions,
      prunes,
      systemPromptChanges: systemPrompts,
      rewinds,
      open: openJson(open),
      ...(log.report.tornTail === undefined
        ? {}
        : { tornTail: log.report.tornTail }),
    };
    const width = Math.max(
      0,
      ...Object.keys(eventsByType).map((t) => t.length),
    );
    const lines = [
      `${redactAddress(file)}: ${count(log.events.length, "event")}, surface ${
        count(surface.length, "node")
      } (${count(messages.length, "message")}, ${
        count(surfaceChars, "character")
      }), ${count(surface.replacements, "replacement")}`,
      "events by type:",
      ...Object.entries(eventsByType).map(([type, n]) =>
        `  ${type.padEnd(width)}  ${num(n)}`
      ),
    ];
    const section = (
      noun: string,
      g: ReturnType<typeof group>,
      verb = "replaced",
    ): string[] => [
      `${count(g.count, noun)}${
        g.count === 0
          ? ""
          : `, ${count(g.shadowedNodes, "node")} shadowed, ${
            count(g.charsSaved, "character")
          } saved`
      }`,
      ...g.items.map((i) =>
        `  seq ${i.seq} ${verb} ${seqRun(i.shadowed)}: ${
          num(i.charsBefore)
        } -> ${num(i.charsAfter)} characters`
      ),
    ];
    lines.push(
      ...section("compaction", compactions),
      ...section("prune", prunes),
      ...section("system prompt change", systemPrompts),
      // A rewind's "saving" leaves out the nodes it brings back.
      ...(rewinds.count === 0 ? [] : section("rewind", rewinds, "took off")),
      opened.length === 0
        ? "open: nothing (every turn and compaction has its end)"
        : `open: ${opened.join("; ")}`,
    );
    return okOutcome(json, lines);
  },
);
