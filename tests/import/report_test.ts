/**
 * The text rendering of an import report: one item per line, line numbers
 * compressed into ranges, and each section only when it has entries.
 */
import { formatImportReport, lineRanges } from "@palimpsest/session/import";
import assert from "node:assert/strict";

Deno.test("formatImportReport renders every section with its lines", () => {
  const text = formatImportReport({
    from: "claude-code",
    file: "s.jsonl",
    formatVersion: "2.0.13",
    lines: 9,
    kinds: { user: 2, assistant: 3, progress: 4 },
    events: 12,
    surface: 5,
    compactions: 1,
    repairs: 1,
    openTurn: true,
    synthesized: [{ line: 4, kind: "tool-call", note: "closed" }],
    skipped: [{
      kind: "progress",
      count: 4,
      reason: "noise",
      lines: [1, 2, 3, 7],
    }],
    opaque: [{
      kind: "assistant/redacted_thinking",
      count: 1,
      reason: "redacted",
      lines: [5],
    }],
    notCarried: [{ line: 0, kind: "torn", note: "whole file" }, {
      line: 8,
      kind: "user",
      note: "rewind",
    }],
    branches: [{ fromLine: 0, lines: [6] }, { fromLine: 2, lines: [8, 9] }],
  }, "out.jsonl");
  assert.equal(
    text,
    [
      "imported claude-code (format 2.0.13) s.jsonl to out.jsonl: 9 lines, 12 events, surface 5, 1 compaction, 1 repair",
      "source kinds: progress 4, assistant 3, user 2",
      "synthesized:",
      "  line 4 (tool-call): closed",
      "skipped:",
      "  progress x4 (noise): lines 1-3, 7",
      "kept opaque:",
      "  assistant/redacted_thinking x1 (redacted): lines 5",
      "not carried over:",
      "  file (torn): whole file",
      "  line 8 (user): rewind",
      "branches left out:",
      "  from the root: 1 entries, lines 6",
      "  from line 2: 2 entries, lines 8-9",
      "the last turn is open: `palimpsest repair` closes it",
      "",
    ].join("\n"),
  );
});

Deno.test("formatImportReport leaves out empty sections", () => {
  const text = formatImportReport({
    from: "pi",
    file: "s.jsonl",
    lines: 1,
    kinds: {},
    events: 1,
    surface: 0,
    compactions: 0,
    repairs: 0,
    openTurn: false,
    synthesized: [],
    skipped: [],
    opaque: [],
    notCarried: [],
    branches: [],
  });
  assert.equal(
    text,
    "imported pi s.jsonl: 1 line, 1 event, surface 0, 0 compactions, 0 repairs\nsource kinds: \n",
  );
});

Deno.test("lineRanges stops after the most ranges it shows", () => {
  assert.equal(lineRanges([1, 3, 5, 7], 2), "1, 3, ...");
});
