/**
 * The header of an imported session: the source's session id and start,
 * and `meta.importedFrom` naming the tool, its version, the file and the
 * source's own identity; the file's name and 0 when the source has neither.
 */
import { importSession, type SourceTool } from "@palimpsest/session/import";
import { Effect } from "effect";
import { fileURLToPath } from "node:url";
import assert from "node:assert/strict";
import { withTempFile } from "../_helpers/temp_file.ts";

const fixture = (tool: SourceTool, name: string): string =>
  fileURLToPath(
    new URL(`../fixtures/import/${tool}/${name}.jsonl`, import.meta.url),
  );

const headerOf = async (file: string, from: SourceTool) =>
  (await Effect.runPromise(importSession(file, { from }))).session.header;

const start = Date.UTC(2026, 0, 1);

Deno.test("each importer's header carries the source's id, start and identity", async () => {
  assert.deepEqual(await headerOf(fixture("pi", "v3-branches"), "pi"), {
    id: "pi-tree",
    createdAt: start,
    isSeeded: false,
    meta: {
      importedFrom: {
        tool: "pi",
        version: 3,
        file: "v3-branches.jsonl",
        id: "pi-tree",
        cwd: "/w",
      },
    },
  });
  assert.deepEqual(
    await headerOf(fixture("claude-code", "compact"), "claude-code"),
    {
      id: "cc-compact",
      createdAt: start,
      isSeeded: false,
      meta: {
        importedFrom: {
          tool: "claude-code",
          file: "compact.jsonl",
          version: "2.0.13",
        },
      },
    },
  );
  assert.deepEqual(await headerOf(fixture("codex", "compacted"), "codex"), {
    id: "cx-2",
    createdAt: start,
    isSeeded: false,
    meta: {
      importedFrom: {
        tool: "codex",
        file: "compacted.jsonl",
        id: "cx-2",
        version: "0.99.0",
        cwd: "/w",
      },
    },
  });
});

Deno.test("a source without a session id or a start gives the file's name and 0", async () => {
  const line =
    '{"type":"user","timestamp":"not a date","message":{"role":"user","content":"hi"}}\n';
  await withTempFile("anonymous.jsonl", line, async (file) => {
    assert.deepEqual(await headerOf(file, "claude-code"), {
      id: "anonymous.jsonl",
      createdAt: 0,
      isSeeded: false,
      meta: {
        importedFrom: { tool: "claude-code", file: "anonymous.jsonl" },
      },
    });
  });
});
