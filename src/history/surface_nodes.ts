/**
 * What the history operations read off a surface: its nodes in order, the
 * tool call/result pairs among them, the system head, the turn and step the
 * log is in, and how many characters a message holds. Shared by compaction,
 * range selection, pruning and the system prompt; O(surface length) each.
 *
 * @module
 */
import type { SessionSeq } from "../core/seq.ts";
import type {
  ContentBlock,
  Message,
  ToolResultContentBlock,
} from "../core/message.ts";
import type { SurfaceEvent } from "../core/event.ts";
import { forEachNode, type Surface } from "../surface/mod.ts";
import type { Session } from "../session/session.ts";
import { turnMarks } from "../session/prior.ts";

export interface Node {
  readonly seq: SessionSeq;
  readonly event: SurfaceEvent;
}

export const nodesOf = (surface: Surface): Node[] => {
  const out: Node[] = [];
  forEachNode(surface, (seq, event) => {
    out.push({ seq, event });
  });
  return out;
};

const callIdsOf = (event: SurfaceEvent): string[] => {
  if (event.type !== "assistant/message") return [];
  const ids: string[] = [];
  for (const block of event.data.message.content) {
    if (block.type === "tool-call") ids.push(block.id);
  }
  return ids;
};

const resultIdOf = (event: SurfaceEvent): string | undefined =>
  event.type === "tool/result"
    ? event.data.message.content[0].toolCallId
    : undefined;

/**
 * For each position, the positions of its partners: the results answering
 * an assistant message's calls, or the assistant message a result answers.
 * With `pending`, a call with no result on the surface gets the partner
 * `nodes.length`, past every range: its result may still be appended.
 */
export const partnersOf = (
  nodes: ReadonlyArray<Node>,
  pending = false,
): number[][] => {
  const calls = new Map<string, number[]>();
  const results = new Map<string, number[]>();
  const push = (map: Map<string, number[]>, key: string, pos: number) => {
    const list = map.get(key);
    if (list === undefined) map.set(key, [pos]);
    else list.push(pos);
  };
  nodes.forEach(({ event }, pos) => {
    for (const id of callIdsOf(event)) push(calls, id, pos);
    const id = resultIdOf(event);
    if (id !== undefined) push(results, id, pos);
  });
  const partners: number[][] = nodes.map(() => []);
  for (const [id, callPositions] of calls) {
    const resultPositions = results.get(id) ?? [];
    if (pending && resultPositions.length === 0) {
      for (const c of callPositions) partners[c]?.push(nodes.length);
    }
    for (const c of callPositions) {
      for (const r of resultPositions) {
        partners[c]?.push(r);
        partners[r]?.push(c);
      }
    }
  }
  return partners;
};

export const isSummary = (event: SurfaceEvent): boolean =>
  event.type === "user/message" && event.data.source.kind === "plugin" &&
  event.data.source.plugin === "compaction";

export const hasSystemHead = (nodes: ReadonlyArray<Node>): boolean =>
  nodes[0]?.event.type === "system/message";

/** The first call/result pair the range `i..j` splits, if any. */
export const findSplit = (
  nodes: ReadonlyArray<Node>,
  partners: ReadonlyArray<ReadonlyArray<number>>,
  i: number,
  j: number,
):
  | { callId: string; callSeq: SessionSeq; resultSeq: SessionSeq }
  | undefined => {
  for (let k = i; k <= j; k++) {
    for (const p of partners[k] ?? []) {
      if (p >= i && p <= j) continue;
      const inside = nodes[k];
      const outside = nodes[p];
      if (inside === undefined || outside === undefined) continue;
      const [call, result] = inside.event.type === "tool/result"
        ? [outside, inside]
        : [inside, outside];
      return {
        callId: resultIdOf(result.event) ?? "",
        callSeq: call.seq,
        resultSeq: result.seq,
      };
    }
  }
  return undefined;
};

/**
 * The turn and step the log is in, read backwards from its last event (and,
 * in a session opened from a checkpoint, from what it recorded).
 */
export const currentTurnStep = (
  session: Session,
): { turn: number; step: number } =>
  turnMarks(session).turnStep ?? { turn: 0, step: 0 };

const blockChars = (block: ContentBlock | ToolResultContentBlock): number => {
  switch (block.type) {
    case "text":
    case "reasoning":
      return block.text.length;
    case "tool-call":
      return block.name.length + block.arguments.length;
    case "tool-result": {
      let n = 0;
      for (const inner of block.content) n += blockChars(inner);
      return n;
    }
    default:
      return 0;
  }
};

/**
 * The characters a message weighs: its texts and reasoning, tool-call names
 * and arguments, and the texts inside tool results (images and files weigh
 * nothing). The measure range selection by budget, `stats` and the view
 * count in.
 *
 * @param message A message, or undefined (an empty projection).
 * @returns The character count.
 *
 * @example Counting a tool call
 * ```ts
 * import { messageChars } from "@palimpsest/session/internal";
 * import assert from "node:assert/strict";
 *
 * assert.equal(messageChars({
 *   id: "a1", role: "assistant", source: { kind: "model", provider: "p", model: "m" },
 *   content: [{ type: "text", text: "hi" }, { type: "tool-call", id: "c1", name: "ls", arguments: "{}" }],
 * }), 6);
 * ```
 */
export function messageChars(message: Message | undefined): number {
  if (message === undefined) return 0;
  let n = 0;
  for (const block of message.content) n += blockChars(block);
  return n;
}
