/**
 * The comparison of an import with what the tool itself rebuilds
 * (`../shared/peer-logs/expected/`), the deliberate differences applied by
 * name and counted: shared by the importers' study-log test and the
 * exporters' round trip (an exported file, imported again, must compare
 * the same).
 */
import type { SessionEvent } from "@palimpsest/session";
import type { SourceTool } from "@palimpsest/session/import";
import * as fs from "node:fs";
import * as path from "node:path";
import assert from "node:assert/strict";
import type { assertRepairsClean } from "./_clean_transcript.ts";
import {
  codexItems,
  codexOracle,
  firstDifference,
  type Item,
  messagesAfterOpenCalls,
  piItems,
  piOracle,
} from "./_oracle.ts";
import { opencodeOracle } from "./_opencode_oracle.ts";
/** The oracle for a file, by its name. */
export const oracleOf = (base: string, rel: string): unknown => {
  const name = path.basename(rel, ".jsonl");
  const file = rel.startsWith("damaged/pi/")
    ? "pi/damaged-compact"
    : rel.startsWith("pi/")
    ? `pi/${name}`
    : `codex/${name}`;
  return JSON.parse(
    fs.readFileSync(path.join(base, "expected", `${file}.next.json`), "utf8"),
  );
};

export interface Compared {
  readonly items: number;
  readonly deliberate: Readonly<Record<string, number>>;
}

/**
 * The deliberate differences, each applied by name and counted; what is
 * left must be equal.
 */
export const compareWithOracle = (
  tool: SourceTool,
  oracle: unknown,
  repaired: ReturnType<typeof assertRepairsClean>,
  events: ReadonlyArray<SessionEvent>,
): Compared => {
  const deliberate: Record<string, number> = {};
  const note = (name: string, n: number) => {
    if (n > 0) deliberate[name] = (deliberate[name] ?? 0) + n;
  };
  let messages = repaired.messages;
  let theirs: Item[];
  if (tool === "pi") {
    // pi drops aborted and errored assistant messages even with content;
    // the library keeps them and closes their calls.
    const stopped = new Set<string>();
    for (const e of events) {
      if (e.type !== "assistant/message") continue;
      const errored = e.data.stream.some((c) =>
        typeof c.chunk === "object" && c.chunk !== null &&
        Reflect.get(c.chunk, "type") === "error"
      );
      if (e.data.interrupted === true || errored) {
        stopped.add(e.data.message.id);
      }
    }
    const calls = new Set<string>();
    const before = messages.length;
    messages = messages.filter((m) => {
      if (!stopped.has(m.id)) return true;
      for (const b of m.content) if (b.type === "tool-call") calls.add(b.id);
      return false;
    }).filter((m) =>
      !m.content.some((b) =>
        b.type === "tool-result" && calls.has(b.toolCallId)
      )
    );
    note(
      "aborted or errored assistant messages kept, with their calls' results",
      before - messages.length,
    );
    theirs = piOracle((oracle as { messages: unknown[] }).messages);
  } else if (tool === "opencode") {
    const raw = opencodeOracle(oracle);
    theirs = raw.filter((i) => !(i.k === "reasoning" && i.text === ""));
    note(
      "reasoning with no readable text kept opaque in the stream, not resent",
      raw.length - theirs.length,
    );
  } else {
    const raw = codexOracle((oracle as { prompt: unknown[] }).prompt);
    theirs = raw.filter((i) => !(i.k === "reasoning" && i.text === ""));
    note(
      "reasoning with no readable text kept opaque in the stream, not resent",
      raw.length - theirs.length,
    );
    const hosted = theirs.length;
    theirs = theirs.filter((i) =>
      !(i.k === "opaque" &&
        ["web_search_call", "tool_search_call", "tool_search_output"].includes(
          String(Reflect.get(Object(i.item), "type")),
        ))
    );
    note(
      "hosted tool items kept opaque in the stream, not resent",
      hosted - theirs.length,
    );
    const moved = messagesAfterOpenCalls(theirs);
    note(
      "messages logged between a call and its output placed after the output",
      moved.filter((item, i) =>
          JSON.stringify(item) !== JSON.stringify(theirs[i])
        ).length > 0
        ? moved.filter((item, i) =>
          item.k === "message" &&
          JSON.stringify(item) !== JSON.stringify(theirs[i])
        ).length
        : 0,
    );
    theirs = moved;
  }
  // codexItems reads any derived messages as role, text, calls and outputs.
  let ours = tool === "pi" ? piItems(messages) : codexItems(messages);
  // A call still open at the end of the file is left for repair, whose
  // result text is the library's (Codex writes "aborted").
  const closed = new Set(
    repaired.closers.flatMap((e) =>
      e.type === "tool/result" ? [e.data.message.source.callId] : []
    ),
  );
  ours = ours.map((item) => {
    if (item.k !== "output" || !closed.has(item.id)) return item;
    const sourceText = tool === "pi"
      ? "No result provided"
      : tool === "codex"
      ? "aborted"
      : "[Tool execution was interrupted]";
    note(
      "a call open at the end of the file closed by repair in the library's words",
      1,
    );
    return { ...item, text: sourceText };
  });
  assert.deepEqual(firstDifference(ours, theirs), undefined);
  return { items: ours.length, deliberate };
};
