/**
 * Text rendering of messages and events for people: one line per message,
 * long texts cut with a note of how much was left out. JSON output never
 * goes through here.
 *
 * @module
 */
import type { ContentBlock, Message } from "@palimpsest/session";
import type { SessionEvent } from "@palimpsest/session";
import { projectEvent } from "../src/surface/project.ts";
import { isSurfaceEvent } from "@palimpsest/session";
import { messageChars } from "../src/history/surface_nodes.ts";
import type { OpenWork } from "@palimpsest/session";
import type { PartialAnswer } from "@palimpsest/session";

/**
 * Cuts a text to `max` characters, saying how many were left out.
 *
 * @param text The text.
 * @param max The most characters kept.
 * @returns The text, or its start and a note.
 */
export function cut(text: string, max: number): string {
  const flat = text.replaceAll("\n", "\\n");
  return flat.length <= max
    ? flat
    : `${flat.slice(0, max)}… (${flat.length - max} more characters)`;
}

const blockText = (block: ContentBlock, max: number): string => {
  switch (block.type) {
    case "text":
      return cut(block.text, max);
    case "reasoning":
      return `(reasoning) ${cut(block.text, max)}`;
    case "image":
    case "file":
      return `(${block.type})`;
    case "tool-call":
      return `call ${block.name}(${cut(block.arguments, max)}) [${block.id}]`;
    case "tool-result": {
      const inner = block.content.map((c) =>
        c.type === "text" ? cut(c.text, max) : `(${c.type})`
      ).join(" ");
      return `result [${block.toolCallId}]${
        block.isError === true ? " error" : ""
      }: ${inner}`;
    }
  }
};

/**
 * One message as a line: role, then each block.
 *
 * @param message The message.
 * @param max The most characters kept per block.
 * @returns The line, without a newline.
 */
export function messageLine(message: Message, max: number): string {
  const body = message.content.map((b) => blockText(b, max)).join(" | ");
  return `${message.role}: ${body === "" ? "(empty)" : body}`;
}

/**
 * A partial answer (an answer cut while it streamed) as a short line: its
 * batches, what it had said, and that the model was never sent it.
 *
 * @param answer The partial answer.
 * @param max The most characters kept per block.
 * @returns The line, without a newline.
 */
export function partialLine(answer: PartialAnswer, max: number): string {
  const said = [
    ...answer.content.map((b) => blockText(b, max)),
    ...answer.calls.map((c) =>
      `[${c.complete ? "call, not run" : "call cut"}] ${c.name} ${
        cut(c.arguments, max)
      }`
    ),
  ].join(" | ");
  return `partial answer (turn ${answer.turn}, step ${answer.step}, seq ${
    answer.seqs.join(", ")
  }), cut while it streamed, not sent to the model: ${
    said === "" ? "(nothing yet)" : said
  }`;
}

/**
 * The characters an event's projection weighs; 0 for log-only events.
 *
 * @param event An event.
 * @returns The character count.
 */
export function eventChars(event: SessionEvent): number {
  if (!isSurfaceEvent(event)) return 0;
  const message = projectEvent(event);
  return message === undefined ? 0 : messageChars(message);
}

/**
 * An event as a short line: seq, type, and its message or data.
 *
 * @param event An event.
 * @param max The most characters kept per block.
 * @returns The line, without a newline.
 */
export function eventLine(event: SessionEvent, max: number): string {
  const head = `seq ${event.seq} ${event.type}`;
  if (isSurfaceEvent(event)) {
    const op = typeof event.surfaceOp === "string"
      ? event.surfaceOp
      : event.surfaceOp.op === "rewind"
      ? `rewind to ${event.surfaceOp.toSeq}`
      : `replace ${event.surfaceOp.startSeq}..${event.surfaceOp.endSeq}`;
    const message = projectEvent(event);
    return `${head} (${op})${
      message === undefined ? "" : ` ${messageLine(message, max)}`
    }`;
  }
  return `${head} ${cut(JSON.stringify(event.data) ?? "", max)}`;
}

/**
 * A count and a noun, plural when the count is not 1.
 *
 * @param n The count.
 * @param noun The singular noun.
 * @returns For example `1 event` or `3 events`.
 */
export function count(n: number, noun: string): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? noun : `${noun}s`}`;
}

/**
 * What a log leaves open, one phrase per open turn or compaction, for
 * people; empty when nothing is open.
 *
 * @param open What `openWork` found.
 * @returns The phrases.
 */
export function openPhrases(open: OpenWork): string[] {
  return [
    ...open.turns.map((t) =>
      `turn ${t.turn} is open (turn/start at seq ${t.startSeq}${
        t.step === undefined ? "" : `, step ${t.step} open`
      })`
    ),
    ...open.compactions.map((c) =>
      `compaction ${
        JSON.stringify(c.compactionId)
      } is open (compaction/start at seq ${c.startSeq}, no compaction/end)`
    ),
  ];
}

/**
 * What a log leaves open, as `--json` shows it.
 *
 * @param open What `openWork` found.
 * @returns Plain data: the open turns and compactions.
 */
export function openJson(open: OpenWork): {
  turns: Array<{ turn: number; startSeq: number; step?: number }>;
  compactions: Array<{ compactionId: string; startSeq: number }>;
} {
  return {
    turns: open.turns.map((t) => ({
      turn: t.turn,
      startSeq: t.startSeq,
      ...(t.step === undefined ? {} : { step: t.step }),
    })),
    compactions: open.compactions.map((c) => ({
      compactionId: c.compactionId,
      startSeq: c.startSeq,
    })),
  };
}
