/**
 * `explain FILE SEQ`: where a node came from and what became of it. The
 * lineage is the tree of events the node stands for, following
 * `sourceEventSeqs` down to the original events; "shadowed by" is the chain
 * of replacements that took it off the surface, ending at the node that
 * stands for it now.
 *
 * @module
 */
import { Effect } from "effect";
import { SessionSeq } from "../../seq.ts";
import type { SessionEvent } from "../../event.ts";
import { isSurfaceEvent } from "../../event.ts";
import { encodeEvent } from "../../decode.ts";
import { Session } from "../../session.ts";
import { surfaceEvent } from "../../surface.ts";
import { lineage, type LineageNode, shadowedBy } from "../../provenance.ts";
import { type Command, ExitCode, failureOutcome } from "../outcome.ts";
import { loadLog } from "../load.ts";
import { eventLine } from "../render.ts";

/** A lineage node as `explain --json` prints it. */
export interface LineageJson {
  /** The event's seq. */
  readonly seq: number;
  /** The event's type, or null for a source before the window. */
  readonly type: string | null;
  /** Its sources; absent when `repeated`. */
  readonly sources?: ReadonlyArray<LineageJson>;
  /** True when this event was printed earlier in the tree (sources left out). */
  readonly repeated?: true;
}

const toJson = (node: LineageNode, seen: Set<number>): LineageJson => {
  const type = node.event?.type ?? null;
  if (seen.has(node.seq)) return { seq: node.seq, type, repeated: true };
  seen.add(node.seq);
  return {
    seq: node.seq,
    type,
    sources: node.sources.map((s) => toJson(s, seen)),
  };
};

const treeLines = (
  node: LineageJson,
  session: Session,
  prefix: string,
  last: boolean,
  top: boolean,
  out: string[],
): void => {
  const event = Session.eventAt(session, SessionSeq.make(node.seq));
  const label = event === undefined
    ? `seq ${node.seq} (before this log's window)`
    : eventLine(event, 80);
  const branch = top ? "" : last ? "└─ " : "├─ ";
  out.push(`${prefix}${branch}${label}${node.repeated ? " (see above)" : ""}`);
  const children = node.sources ?? [];
  const next = top ? prefix : `${prefix}${last ? "   " : "│  "}`;
  children.forEach((child, i) =>
    treeLines(child, session, next, i === children.length - 1, false, out)
  );
};

const usage = (message: string) => ({
  code: ExitCode.usage,
  json: { ok: false, error: { tag: "UsageError", message } },
  text: "",
  errText: `error: ${message}\n`,
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
      "for, following sourceEventSeqs down to the original events.",
    positionals: [
      { name: "FILE", summary: "the session log (JSONL)" },
      { name: "SEQ", summary: "the seq of the event to explain" },
    ],
    options: [],
  },
  run: (args, io) =>
    Effect.gen(function* () {
      const file = args.positionals[0] ?? "";
      const text = args.positionals[1] ?? "";
      const n = /^\d+$/.test(text) ? Number(text) : Number.NaN;
      if (!Number.isSafeInteger(n)) {
        return usage(
          `Expected SEQ to be a non-negative integer but found "${text}"`,
        );
      }
      const result = yield* Effect.result(
        loadLog(file, io, { recover: false }),
      );
      if (result._tag === "Failure") {
        const error = result.failure;
        return failureOutcome(
          error._tag === "JsonlIoError" ? ExitCode.usage : ExitCode.invalid,
          file,
          error,
        );
      }
      const session = result.success.session;
      const seq = SessionSeq.make(n);
      const event: SessionEvent | undefined = Session.eventAt(session, seq);
      const tree = lineage(session, seq);
      if (event === undefined || tree === undefined) {
        const last = Session.nextSeq(session) - 1;
        return usage(
          last < session.surface.baseSeq
            ? `Seq "${n}" is not in the log: it has no events`
            : `Seq "${n}" is not in the log; choose one from "${session.surface.baseSeq}" to "${last}"`,
        );
      }
      const onSurface = surfaceEvent(session.surface, seq) !== undefined;
      const chain: SessionSeq[] = [];
      for (let at = shadowedBy(session, seq); at !== undefined;) {
        chain.push(at);
        at = shadowedBy(session, at);
      }
      const lineageJson = toJson(tree, new Set());
      const json = {
        ok: true,
        seq: n,
        type: event.type,
        surfaceEvent: isSurfaceEvent(event),
        onSurface,
        shadowedBy: chain,
        event: encodeEvent(event),
        lineage: lineageJson,
      };
      const lines = [eventLine(event, 100)];
      if (!isSurfaceEvent(event)) {
        lines.push("a log-only event: it never joins the surface");
      } else if (onSurface) {
        lines.push("on the surface");
      } else if (chain.length === 0) {
        lines.push("off the surface");
      } else {
        lines.push("off the surface, shadowed by:");
        for (const at of chain) {
          const by = Session.eventAt(session, at);
          const current = surfaceEvent(session.surface, at) !== undefined;
          lines.push(
            `  ${by === undefined ? `seq ${at}` : eventLine(by, 80)}${
              current ? " (on the surface)" : ""
            }`,
          );
        }
      }
      lines.push("lineage:");
      const tree_: string[] = [];
      treeLines(lineageJson, session, "  ", true, true, tree_);
      lines.push(...tree_);
      return { code: ExitCode.ok, json, text: `${lines.join("\n")}\n` };
    }),
};
