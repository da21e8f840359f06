/**
 * The exporters over the real session files other tools wrote
 * (`../shared/peer-logs/`, read there, never copied): every file is
 * imported, exported to each tool, and the export imported again.
 *
 * - To the tool that wrote it: the export imports back to what the model
 *   sees, message for message (roles, texts, reasoning, images, tool-call
 *   ids, names and arguments, results and their error flags, in order);
 *   only the system message pi and Claude Code keep no place for is gone,
 *   and Codex's outputs have no error flag.
 * - Where the tool's own rebuilding is known (`expected/`), the exported
 *   file, imported again, says what the tool would send next, as the
 *   original does (the same comparison as the importers' study-log test).
 * - To the other tools: the tool calls and their results keep their ids
 *   and order, and the assistant texts are the same.
 */
import { deriveMessages, type Message } from "@palimpsest/session";
import {
  exportFile,
  importSession,
  targetTools,
} from "@palimpsest/session/import";
import { Effect } from "effect";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import assert from "node:assert/strict";
import { assertRepairsClean } from "./_clean_transcript.ts";
import { compareWithOracle, oracleOf } from "./_oracle_compare.ts";
import { oracleNames, peerLogs, studySessions } from "./_peer_logs.ts";

/** What the model sees of one message, as comparable text. */
const visible = (
  m: Message,
  errorFlags: boolean,
): string =>
  JSON.stringify([
    m.role,
    m.content.map((b) => {
      switch (b.type) {
        case "text":
          // An opaque block (Codex's encrypted compaction) is its item.
          return "opaque" in b ? ["opaque", b.opaque] : ["text", b.text];
        case "reasoning":
          return ["reasoning", b.text];
        case "image":
        case "file":
          return [b.type];
        case "tool-call":
          return ["call", b.id, b.name, b.arguments];
        case "tool-result":
          return [
            "result",
            b.toolCallId,
            b.content.map((c) => c.type === "text" ? c.text : c.type),
            errorFlags && b.isError === true,
          ];
      }
    }),
  ]);

/** The first index where two lists differ, with both sides. */
const firstDiff = (
  ours: ReadonlyArray<string>,
  theirs: ReadonlyArray<string>,
): string | undefined => {
  const n = Math.max(ours.length, theirs.length);
  for (let i = 0; i < n; i++) {
    if (ours[i] !== theirs[i]) {
      return `message ${i}:\n  before ${ours[i]?.slice(0, 400)}\n  after  ${
        theirs[i]?.slice(0, 400)
      }`;
    }
  }
  return undefined;
};

/** The calls, results and assistant texts, in order: what crosses tools. */
const crossing = (messages: ReadonlyArray<Message>): string[] =>
  messages.flatMap((m) =>
    m.content.flatMap((b) =>
      b.type === "tool-call"
        ? [`call ${b.id}`]
        : b.type === "tool-result"
        ? [`result ${b.toolCallId}`]
        : b.type === "text" && m.role === "assistant"
        ? [`text ${b.text}`]
        : []
    )
  );

Deno.test("every study log exported to its tool imports back to what the model sees, and to the other tools keeps its calls, results and answers", async (t) => {
  const base = peerLogs();
  const home = fs.mkdtempSync(path.join(os.tmpdir(), "export-peer-"));
  const files = studySessions(base);
  const oracles = oracleNames(base);
  let sameTool = 0;
  let versusOracle = 0;
  try {
    for (const { rel, from } of files) {
      await t.step(rel, async () => {
        const damaged = rel.startsWith("damaged/");
        const original = await Effect.runPromise(
          importSession(path.join(base, rel), {
            from,
            ...(damaged ? { recover: true } : {}),
          }),
        );
        const before = deriveMessages(original.session.surface);
        const lines: string[] = [];
        for (const to of targetTools) {
          const written = await Effect.runPromise(
            exportFile(original.session, {
              to,
              out: path.join(home, `${rel.replaceAll("/", "-")}.${to}`),
            }),
          );
          const again = await Effect.runPromise(
            importSession(written.file, { from: to }),
          );
          const after = deriveMessages(again.session.surface);
          if (to === from) {
            sameTool += 1;
            // pi and Claude Code keep no system prompt in their files.
            const kept = (m: Message): boolean =>
              m.role !== "system" || to === "codex";
            const flags: boolean = to !== "codex";
            assert.equal(
              firstDiff(
                before.filter(kept).map((m): string => visible(m, flags)),
                after.map((m): string => visible(m, flags)),
              ),
              undefined,
            );
            const name = path.basename(rel, ".jsonl");
            if (to !== "claude-code" && (oracles.has(name) || damaged)) {
              versusOracle += 1;
              const c = compareWithOracle(
                to,
                oracleOf(base, rel),
                assertRepairsClean(again.events),
                again.events,
              );
              lines.push(
                `${to}: same, and the tool's next request over ${c.items} items`,
              );
            } else {
              lines.push(`${to}: same`);
            }
          } else {
            assert.equal(
              firstDiff(crossing(before), crossing(after)),
              undefined,
            );
            lines.push(`${to}: calls, results and answers kept`);
          }
          assert.equal(
            written.lines.length > 0 &&
              written.notCarried.every((n) => n.note !== ""),
            true,
          );
        }
        console.log(`${rel} (${before.length} messages): ${lines.join("; ")}`);
      });
    }
  } finally {
    fs.rmSync(home, { recursive: true, force: true });
  }
  assert.ok(
    files.length >= 12,
    `expected the study files, found ${files.length}`,
  );
  assert.equal(sameTool, files.length - 1); // opencode has no exporter
  assert.equal(versusOracle, 7);
});
