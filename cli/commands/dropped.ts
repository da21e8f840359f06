/**
 * `dropped FILE [COMPACTION]`: what a compaction (or a prune) took off the
 * surface and where it is in the log. Without COMPACTION, the log's
 * compactions and prunes with their ids and seqs; with one (its id, or the
 * seq of any of its events), the nodes it took off, each with its seq,
 * type, role, a short text or its tool calls, and size, then what replaced
 * them, what later took that off, and the branch that holds it.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import {
  type CompactionDrop,
  compactions,
  droppedBy,
  type DroppedNode,
  type LoggedCompaction,
} from "@palimpsest/session";
import { redactAddress } from "../../src/store/redact.ts";
import { branchesOf } from "../../src/history/rewind.ts";
import { classifiedFailure, type Command, okOutcome } from "../outcome.ts";
import { loadOrFail, LOG_POSITIONAL } from "../load.ts";
import { count } from "../render.ts";

/** A compaction the log does not have is a usage error: exit 2. */
const usageTags: ReadonlySet<string> = new Set(["CompactionNotFound"]);

/** The longest text a dropped node's line shows. */
const TEXT = 60;

/** A seq, or a dash where there is none. */
const at = (seq: number | undefined): string =>
  seq === undefined ? "-" : String(seq);

/** The name a compaction goes by: its id, or its kind and seq. */
const nameOf = (c: LoggedCompaction): string =>
  c.compactionId ?? `${c.kind} at ${at(c.replacementSeq ?? c.recordSeq)}`;

const branchJson = (c: LoggedCompaction) =>
  c.branch === undefined ? null : {
    fromSeq: c.branch.fromSeq,
    tipSeq: c.branch.tipSeq,
    current: c.branch.current,
  };

const compactionJson = (c: LoggedCompaction) => ({
  kind: c.kind,
  compactionId: c.compactionId ?? null,
  startSeq: c.startSeq ?? null,
  recordSeq: c.recordSeq ?? null,
  replacementSeq: c.replacementSeq ?? null,
  endSeq: c.endSeq ?? null,
  failed: c.failed,
  branch: branchJson(c),
  onCurrentPath: c.onCurrentPath,
});

const nodeJson = (n: DroppedNode) => ({
  seq: n.seq,
  type: n.type,
  role: n.role,
  text: n.text ?? null,
  toolCalls: n.toolCalls,
  toolCallId: n.toolCallId ?? null,
  chars: n.chars,
  tokens: n.tokens,
  replacement: n.replacement === undefined ? null : {
    kind: n.replacement.kind,
    compactionId: n.replacement.compactionId ?? null,
  },
});

/** Where a compaction's events are, as one phrase. */
const where = (c: LoggedCompaction): string =>
  c.kind === "prune"
    ? `record ${at(c.recordSeq)}, replacement ${at(c.replacementSeq)}`
    : `start ${at(c.startSeq)}, summary ${at(c.recordSeq)}, replacement ${
      at(c.replacementSeq)
    }, end ${at(c.endSeq)}${c.failed ? " (failed)" : ""}`;

/** The branch phrase, in a log with rewinds only. */
const branchPhrase = (c: LoggedCompaction, rewinds: boolean): string =>
  !rewinds || c.branch === undefined
    ? ""
    : `; branch ${c.branch.fromSeq}..${c.branch.tipSeq}${
      c.branch.current ? " (current)" : ""
    }, ${
      c.onCurrentPath
        ? "on the current path"
        : 'not on the current path (a rewind went back before it; "branches FILE")'
    }`;

/** A text on one line, at most {@link TEXT} characters. */
const short = (text: string | undefined): string => {
  const flat = (text ?? "").replaceAll("\n", "\\n");
  return flat.length > TEXT ? `${flat.slice(0, TEXT)}…` : flat;
};

/** How a compaction is named in the text output. */
const label = (c: LoggedCompaction): string =>
  c.compactionId === undefined ? nameOf(c) : JSON.stringify(c.compactionId);

/** One dropped node as a table row. */
const row = (n: DroppedNode): string => {
  const what = n.toolCalls.length > 0
    ? `${n.text === undefined ? "" : `${short(n.text)} `}${
      n.toolCalls.map((t) => `call ${t.name} [${t.id}]`).join(", ")
    }`
    : n.toolCallId !== undefined
    ? `result [${n.toolCallId}] ${short(n.text)}`
    : short(n.text);
  const replaced = n.replacement === undefined
    ? ""
    : ` (a ${n.replacement.kind}${
      n.replacement.compactionId === undefined
        ? ""
        : ` ${JSON.stringify(n.replacement.compactionId)}`
    })`;
  return `  ${String(n.seq).padStart(6)}  ${n.type.padEnd(17)} ${
    n.role.padEnd(9)
  } ${String(n.chars).padStart(7)}  ${what}${replaced}`;
};

const dropLines = (d: CompactionDrop, rewinds: boolean): string[] => {
  const lines = [
    `${d.kind === "prune" ? "" : "compaction "}${label(d)}: ${where(d)}${
      branchPhrase(d, rewinds)
    }`,
    `took off ${count(d.dropped.length, "node")} (${
      count(d.droppedChars, "char")
    }, ~${count(d.droppedTokens, "token")}), seqs ${
      d.ranges.length === 0
        ? "none"
        : d.ranges.map((r) =>
          r.first === r.last ? `${r.first}` : `${r.first}..${r.last}`
        ).join(", ")
    }`,
  ];
  if (d.dropped.length > 0) {
    lines.push(
      `     seq  type              role        chars  text`,
      ...d.dropped.map(row),
    );
  }
  if (d.replacementSeq !== undefined) {
    lines.push(
      `replaced by ${d.replacementSeq} (${count(d.replacementChars, "char")})${
        d.onSurface ? ", on the surface" : ", off the surface"
      }${
        d.takenOffBy === undefined
          ? ""
          : `; taken off by ${d.takenOffBy.seq} (a ${d.takenOffBy.kind})`
      }`,
    );
  } else lines.push("no replacement: the compaction was abandoned or is open");
  return lines;
};

/** The `dropped` command. */
export const droppedCommand: Command = {
  spec: {
    name: "dropped",
    summary: "list what a compaction or prune took off the surface",
    description:
      "Reads and folds FILE. Without COMPACTION, lists the log's compactions\n" +
      "and prunes: their ids and the seqs of their events. With COMPACTION (a\n" +
      "compaction id, or the seq of any of its events), lists the nodes it took\n" +
      "off the surface (seq, type, role, size, a short text or its tool calls),\n" +
      "their seq ranges, what replaced them, what later took that off (a\n" +
      "compaction over the summary, a rewind), and the branch that holds it.",
    positionals: [
      LOG_POSITIONAL,
      {
        name: "COMPACTION",
        summary: "a compaction id, or the seq of one of its events",
        optional: true,
      },
    ],
    options: [],
  },
  run: (args, io) =>
    Effect.gen(function* () {
      const file = args.positionals[0] ?? "";
      const which = args.positionals[1];
      const result = yield* loadOrFail(file, io);
      if (result._tag === "Failure") return result.failure;
      const { session, events } = result.success;
      // The whole log was read: every event is held.
      const list = Result.getOrThrow(compactions(session));
      const rewinds = branchesOf(events).length > 1;
      if (which === undefined) {
        return okOutcome(
          { compactions: list.map(compactionJson) },
          [
            `${redactAddress(file)}: ${
              count(
                list.filter((c) => c.kind === "compaction").length,
                "compaction",
              )
            }, ${
              count(list.filter((c) => c.kind === "prune").length, "prune")
            }`,
            ...list.map((c) =>
              `  ${label(c)}: ${where(c)}${branchPhrase(c, rewinds)}`
            ),
          ],
        );
      }
      // A known id first: an id may look like a number.
      const key = list.some((c) => c.compactionId === which) ||
          !/^\d+$/.test(which)
        ? which
        : Number(which);
      const drop = droppedBy(session, key);
      if (Result.isFailure(drop)) {
        return classifiedFailure(usageTags, file, drop.failure);
      }
      const d = drop.success;
      return okOutcome(
        {
          compaction: compactionJson(d),
          dropped: d.dropped.map(nodeJson),
          ranges: d.ranges,
          surfaceRange: d.surfaceRange ?? null,
          droppedChars: d.droppedChars,
          droppedTokens: d.droppedTokens,
          replacement: d.replacementSeq === undefined ? null : {
            seq: d.replacementSeq,
            chars: d.replacementChars,
            tokens: d.replacementTokens,
            onSurface: d.onSurface,
          },
          takenOffBy: d.takenOffBy ?? null,
        },
        dropLines(d, rewinds),
      );
    }),
};
