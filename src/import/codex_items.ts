/**
 * Codex items as v3 content: message and output content, the source a
 * message gets from its role, which user messages the person typed, and a
 * \`compacted\` line without a replacement history as Codex rebuilds it.
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import type { ContentBlock, ToolResultContentBlock } from "../core/message.ts";
import { surfaceEvent, surfaceNodes } from "../surface/mod.ts";
import { append, type Builder, type Step, uniqueId } from "./builder.ts";
import { notCarried } from "./notes.ts";
import { closeTurn } from "./turns.ts";
import { isRecord } from "./values.ts";
import { compactBefore } from "./compaction.ts";
import { userMessage } from "./messages.ts";
import { appendRewind, pointBefore, rewindPlan } from "./rewind.ts";

/** A message's content as blocks. */
export const messageContent = (u: unknown): ContentBlock[] => {
  if (typeof u === "string") return [{ type: "text", text: u }];
  if (!Array.isArray(u)) return [];
  return u.flatMap((c): ContentBlock[] => {
    if (!isRecord(c)) return [];
    if (typeof c.text === "string") return [{ type: "text", text: c.text }];
    if (c.type === "input_image") {
      return [{ type: "image", attachment: { url: c.image_url ?? null } }];
    }
    return [{ type: "text", text: JSON.stringify(c) }];
  });
};

/** The source of a non-assistant message: the user, or a `codex/<role>` plugin. */
export const sourceOf = (
  role: string | undefined,
): { readonly kind: string; readonly plugin?: string } =>
  role === "user"
    ? { kind: "user" }
    : { kind: "plugin", plugin: `codex/${role ?? "unknown"}` };

/** A tool output as result blocks. */
export const outputContent = (u: unknown): ToolResultContentBlock[] => {
  if (typeof u === "string") return [{ type: "text", text: u }];
  if (isRecord(u) && typeof u.content === "string") {
    return [{ type: "text", text: u.content }];
  }
  if (Array.isArray(u)) {
    return u.flatMap((c): ToolResultContentBlock[] =>
      isRecord(c) && typeof c.text === "string"
        ? [{ type: "text", text: c.text }]
        : isRecord(c) && c.type === "input_image"
        ? [{ type: "image", attachment: { url: c.image_url ?? null } }]
        : [{ type: "text", text: JSON.stringify(c) }]
    );
  }
  return [{ type: "text", text: JSON.stringify(u ?? null) }];
};

/** Texts Codex writes as user messages that the person did not type. */
const contextPrefixes = [
  "<environment_context>",
  "<user_instructions>",
  "# AGENTS.md instructions",
  "<user_shell_command>",
  "<turn_aborted>",
  // The summary of an earlier compaction.
  "Another language model started to solve this problem",
];

/** Whether a user message is one the person typed (what Codex counts as a turn). */
export const isRealUserMessage = (
  m: {
    readonly source: { readonly kind: string };
    readonly content: ReadonlyArray<ContentBlock>;
  },
): boolean => {
  if (m.source.kind !== "user") return false;
  const first = m.content.find((c) => c.type === "text");
  const text = first?.type === "text" ? first.text.trimStart() : "";
  return !contextPrefixes.some((prefix) => text.startsWith(prefix));
};

/** Codex's bound on the user messages a compaction without history keeps, in tokens. */
const keptUserTokens = 20_000;

/** Codex's token estimate: four bytes a token. */
const tokensOf = (text: string): number =>
  Math.ceil(new TextEncoder().encode(text).length / 4);

/**
 * A \`compacted\` line without a replacement history, as Codex rebuilds it:
 * the newest messages the person typed, up to about 20k tokens (the one
 * that does not fit whole is cut to the budget), in order, then the summary
 * as a user message; everything else is dropped. The first kept message
 * replaces the surface, the others follow it, each citing the compaction.
 */
export const keepRecentUserMessages = (
  b: Builder,
  line: number,
  kind: string,
  compactionId: string,
  summary: string,
): Step => {
  const users: Array<ReadonlyArray<ContentBlock>> = [];
  for (const seq of surfaceNodes(b.surface)) {
    const e = surfaceEvent(b.surface, seq);
    if (e?.type === "user/message" && isRealUserMessage(e.data)) {
      users.push(e.data.content);
    }
  }
  const kept: Array<ReadonlyArray<ContentBlock>> = [];
  let budget = keptUserTokens;
  for (let i = users.length - 1; i >= 0 && budget > 0; i--) {
    const content = users[i] ?? [];
    const text = content.flatMap((c) => c.type === "text" ? [c.text] : [])
      .join("");
    const tokens = tokensOf(text);
    if (tokens <= budget) {
      kept.unshift(content);
      budget -= tokens;
      continue;
    }
    kept.unshift([{ type: "text", text: text.slice(0, budget * 4) }]);
    break;
  }
  const summaryContent: ReadonlyArray<ContentBlock> = [{
    type: "text",
    text: summary,
  }];
  const [first, ...rest] = kept;
  const replaced = compactBefore(b, line, {
    compactionId,
    summary,
    kind,
    content: first ?? summaryContent,
    ...(first === undefined ? {} : {
      source: { kind: "user" },
      messageId: `${compactionId}-user`,
    }),
  });
  if (Result.isFailure(replaced)) return Result.fail(replaced.failure);
  const cited = [replaced.success];
  const tail = first === undefined ? rest : [...rest, summaryContent];
  for (const [i, content] of tail.entries()) {
    const last = first !== undefined && i === tail.length - 1;
    const made = userMessage(
      b,
      line,
      last ? `compaction-${compactionId}` : `${compactionId}-user`,
      content,
      last ? { kind: "plugin", plugin: "compaction" } : { kind: "user" },
      cited,
    );
    if (Result.isFailure(made)) return Result.fail(made.failure);
  }
  notCarried(
    b,
    line,
    kind,
    `a compaction without a replacement history: ${kept.length} user message${
      kept.length === 1 ? "" : "s"
    } and the summary kept, as Codex rebuilds it`,
  );
  return Result.succeed(undefined);
};

/**
 * \`thread_rolled_back\`: the last \`numTurns\` user turns (from the
 * message the person typed that opened them) are taken off by a rewind to
 * right before them, carried by one empty message from the
 * \`codex/rollback\` plugin, which no adapter sends: Codex drops them, and
 * they stay in the log as a branch. Where no point before them gives
 * exactly the nodes kept, they are replaced by that message instead.
 */
export const rollBack = (
  b: Builder,
  line: number,
  kind: string,
  numTurns: unknown,
): Step => {
  const turns = typeof numTurns === "number" ? numTurns : 0;
  const nodes = surfaceNodes(b.surface);
  const starts = nodes.filter((seq) => {
    const e = surfaceEvent(b.surface, seq);
    return e?.type === "user/message" && isRealUserMessage(e.data);
  });
  const from = starts[Math.max(0, starts.length - turns)];
  const last = nodes[nodes.length - 1];
  if (turns <= 0 || from === undefined || last === undefined) {
    notCarried(b, line, kind, "a rollback with no user turn to drop");
    return Result.succeed(undefined);
  }
  const shadowed = nodes.slice(nodes.indexOf(from));
  const closed = closeTurn(b, line, "interrupted");
  if (Result.isFailure(closed)) return closed;
  const data = {
    id: uniqueId(b, `codex-rollback-L${line}`),
    role: "user",
    content: [{ type: "text", text: "" }],
    source: { kind: "plugin", plugin: "codex/rollback" },
  };
  // A rewind to right before the first dropped turn keeps the turns in the
  // log as a branch; where none gives exactly the nodes kept (a compaction
  // in between), the dropped nodes are replaced as before.
  const point = pointBefore(
    b.surface,
    from,
    nodes.slice(0, nodes.indexOf(from)),
  );
  const plan = point === undefined ? undefined : rewindPlan(b.surface, point);
  const rewinds = point !== undefined && plan !== undefined;
  const made = rewinds ? appendRewind(b, line, point, plan, data) : append(b, {
    type: "user/message",
    surfaceOp: { op: "replace", startSeq: from, endSeq: last },
    sourceEventSeqs: shadowed,
    data,
  }, line);
  if (Result.isFailure(made)) return Result.fail(made.failure);
  notCarried(
    b,
    line,
    kind,
    `the last ${turns} user turn${
      turns === 1 ? "" : "s"
    } (${shadowed.length} surface nodes) ${
      rewinds
        ? `taken off by a rewind to seq ${point}, as Codex drops them; they stay in the log as a branch`
        : "replaced by an empty message, as Codex drops them"
    }`,
  );
  return Result.succeed(undefined);
};
