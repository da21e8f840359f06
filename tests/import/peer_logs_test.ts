/**
 * The importers over the real session files other tools wrote, kept beside
 * the repository in `../shared/peer-logs/` (never copied into it), every
 * file under it recursively. For each file:
 *
 * - it imports (the `damaged/` one is refused strictly with its line number,
 *   and imported with `recover`), and the written log reads back through the
 *   library's reader, which checks every v3 rule;
 * - its derived messages, once repair closes a turn the file left open,
 *   form a clean transcript with zero pairing repairs;
 * - after the source's last compaction, no item the tool dropped is on the
 *   surface and every item the tool kept is;
 * - for pi and Codex, the derived messages at the end equal the message
 *   list the tool itself rebuilds (`expected/`), and for opencode the list
 *   its rules give for the export (`_opencode_oracle.ts`), apart from the deliberate
 *   differences documented in `docs/importing.md`, each applied here by
 *   name and counted.
 *
 * Prints one report line per file.
 */
import type { SessionEvent } from "@palimpsest/session";
import { surfaceNodes } from "@palimpsest/session/internal";
import { readSessionFile } from "@palimpsest/session/jsonl";
import {
  importFile,
  importSession,
  type SourceTool,
} from "@palimpsest/session/import";
import { Effect } from "effect";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import assert from "node:assert/strict";
import { assertRepairsClean } from "./_clean_transcript.ts";
import { compareWithOracle, oracleOf } from "./_oracle_compare.ts";
import { oracleNames, peerLogs, studySessions } from "./_peer_logs.ts";

const records = (file: string): Array<[number, Record<string, unknown>]> =>
  fs.readFileSync(file, "utf8").split("\n").flatMap((text, i) => {
    try {
      const value: unknown = JSON.parse(text);
      return typeof value === "object" && value !== null
        ? [[i + 1, value as Record<string, unknown>]]
        : [];
    } catch {
      return [];
    }
  });

/**
 * The source's last compaction: its line, and the first source line whose
 * items the tool kept (earlier items it dropped).
 */
const lastCompaction = (
  tool: SourceTool,
  file: string,
): { readonly line: number; readonly keptFrom: number } | undefined => {
  if (tool === "opencode") {
    // The last compaction whose summary completed: opencode keeps it on.
    const text = fs.readFileSync(file, "utf8");
    const messages = (JSON.parse(text) as {
      messages: Array<{ info: Record<string, unknown>; parts: unknown[] }>;
    }).messages;
    const done = new Set(
      messages.filter((m) =>
        m.info.summary === true && m.info.finish !== undefined &&
        m.info.error === undefined
      ).map((m) => m.info.parentID),
    );
    const last = messages.findLast((m) =>
      done.has(m.info.id) &&
      m.parts.some((p) => Reflect.get(Object(p), "type") === "compaction")
    );
    if (last === undefined) return undefined;
    const line = text.split("\n").findIndex((l) =>
      l.includes(`"id": ${JSON.stringify(last.info.id)}`)
    ) + 1;
    return { line, keptFrom: line };
  }
  const all = records(file);
  let found: { line: number; keptFrom: number } | undefined;
  for (const [line, r] of all) {
    if (tool === "pi" && r.type === "compaction") {
      const byId = typeof r.firstKeptEntryId === "string"
        ? all.find(([, e]) => e.id === r.firstKeptEntryId)?.[0]
        : undefined;
      // v1: an index into the entries pi read, the header being 0.
      const byIndex = typeof r.firstKeptEntryIndex === "number"
        ? all[r.firstKeptEntryIndex]?.[0]
        : undefined;
      found = { line, keptFrom: byId ?? byIndex ?? line };
    }
    if (tool === "codex" && r.type === "compacted") {
      found = { line, keptFrom: line };
    }
    if (
      tool === "claude-code" && r.type === "system" &&
      r.subtype === "compact_boundary" && r.isSidechain !== true
    ) {
      found = { line, keptFrom: line };
    }
  }
  return found;
};

const surfaceTypes = new Set([
  "user/message",
  "assistant/message",
  "tool/result",
  "system/message",
]);

/** Checks the surface after the source's last compaction; gives its node count. */
const assertAfterCompaction = (
  tool: SourceTool,
  file: string,
  events: ReadonlyArray<SessionEvent>,
  surface: ReadonlyArray<number>,
): string => {
  const compaction = lastCompaction(tool, file);
  if (compaction === undefined) return "no compaction";
  const linesEvent = events[events.length - 1];
  assert.equal(linesEvent?.type, "import/lines");
  const lines = (linesEvent?.data as { lines: number[] }).lines;
  const on = new Set(surface);
  const head = events.find((e) => e.type === "system/message")?.seq;
  // Nothing the tool dropped: every node comes from the kept range, is the
  // system head, or was made by the importer (line 0).
  for (const seq of surface) {
    const line = lines[seq] ?? 0;
    assert.ok(
      seq === head || line === 0 || line >= compaction.keptFrom,
      `seq ${seq} (source line ${line}) is before the kept range (${compaction.keptFrom})`,
    );
  }
  // Everything it kept: every source line of the kept range that became
  // messages has one on the surface (a summary that comes first may be
  // followed by copies of the kept messages).
  const made = new Map<number, boolean>();
  for (const e of events) {
    const line = lines[e.seq] ?? 0;
    if (!surfaceTypes.has(String(e.type)) || line < compaction.keptFrom) {
      continue;
    }
    made.set(line, (made.get(line) ?? false) || on.has(e.seq));
  }
  for (const [line, kept] of made) {
    assert.ok(
      kept,
      `source line ${line} is kept by the tool but not on the surface`,
    );
  }
  const kept = made.size;
  return `last compaction line ${compaction.line}, kept from line ${compaction.keptFrom}: ${kept} source lines on the surface`;
};

Deno.test("every study log imports, verifies, needs no pairing repair and says what the tool would send next", async (t) => {
  const base = peerLogs();
  const out = fs.mkdtempSync(path.join(os.tmpdir(), "import-peer-"));
  const files = studySessions(base);
  // Every file is a session: JSONL, or an `opencode export` JSON document.
  assert.deepEqual(
    files.flatMap(({ rel }) => rel.endsWith(".jsonl") ? [] : [rel]),
    ["opencode/all-tools.json"],
  );
  const oracles = oracleNames(base);
  let compared = 0;
  try {
    for (const { rel, from: tool } of files) {
      await t.step(rel, async () => {
        const source = path.join(base, rel);
        const damaged = rel.startsWith("damaged/");
        if (damaged) {
          const refused = await Effect.runPromise(
            Effect.flip(importSession(source, { from: tool })),
          );
          assert.equal(refused._tag, "ImportLineNotJson");
          assert.equal("line" in refused ? refused.line : 0, 1013);
        }
        const target = path.join(out, rel.replaceAll("/", "-"));
        const imported = await Effect.runPromise(
          importFile(source, {
            from: tool,
            out: target,
            ...(damaged ? { recover: true } : {}),
          }),
        );
        const log = await Effect.runPromise(readSessionFile(target));
        assert.equal(log.report.tornTail, undefined);
        assert.equal(log.events.length, imported.report.events);
        const repaired = assertRepairsClean(log.events);
        assert.ok(repaired.messages.length > 0, "an empty session");
        const after = assertAfterCompaction(
          tool,
          source,
          log.events,
          surfaceNodes(imported.session.surface),
        );
        let versus = "no oracle";
        const name = path.basename(rel, ".jsonl");
        if (
          tool === "opencode" ||
          (tool !== "claude-code" && (oracles.has(name) || damaged))
        ) {
          const c = compareWithOracle(
            tool,
            // opencode's oracle is computed from the export by its rules.
            tool === "opencode"
              ? JSON.parse(fs.readFileSync(source, "utf8"))
              : oracleOf(base, rel),
            repaired,
            log.events,
          );
          compared += 1;
          const diffs = Object.entries(c.deliberate).map(([k, n]) =>
            `${n} × ${k}`
          );
          versus = `equal to the oracle over ${c.items} items${
            diffs.length === 0 ? "" : `, deliberate: ${diffs.join("; ")}`
          }`;
        }
        const r = imported.report;
        console.log(
          `${rel}: ${r.events} events, surface ${r.surface}, ${r.compactions} compaction${
            r.compactions === 1 ? "" : "s"
          }, ${
            r.repairs + repaired.closers.filter((e) =>
              e.type === "tool/result"
            ).length
          } closing results, 0 pairing repairs; ${after}; ${versus}`,
        );
      });
    }
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
  assert.ok(
    files.length >= 12,
    `expected the study files, found ${files.length}`,
  );
  assert.equal(compared, 8);
});
