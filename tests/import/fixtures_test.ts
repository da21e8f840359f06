/**
 * The importers over hand-written fixtures, one per format and case (and
 * opencode's database as the pinned opencode wrote it): each `<name>.jsonl`
 * (`<name>.json`, `<name>.db`) has a `<name>.expected.json` with the derived messages
 * (seq, id, role) and the parts of the report the case is about. Every
 * imported log is also checked to replay, and to give a clean transcript
 * once the library's repair closes its last turn.
 */
import { deriveMessagesWithSources } from "@palimpsest/session";
import { importSession, type SourceTool } from "@palimpsest/session/import";
import { Effect } from "effect";
import assert from "node:assert/strict";
import { assertRepairsClean } from "./_clean_transcript.ts";

const root = new URL("../fixtures/import/", import.meta.url);

interface Expected {
  readonly recover?: boolean;
  readonly refusal?: { readonly _tag: string; readonly line: number };
  readonly messages?: ReadonlyArray<readonly [number, string, string]>;
  readonly report?: Readonly<Record<string, unknown>>;
}

const tools: ReadonlyArray<readonly [SourceTool, string]> = [
  ["pi", ".jsonl"],
  ["claude-code", ".jsonl"],
  ["codex", ".jsonl"],
  ["opencode", ".db"],
  ["gemini-cli", ".jsonl"],
  ["gemini-cli", ".json"],
];

for (const [tool, extension] of tools) {
  const dir = new URL(`${tool}/`, root);
  const names = [...Deno.readDirSync(dir)]
    .map((e) => e.name)
    .filter((n) => n.endsWith(extension) && !n.endsWith(".expected.json"))
    .sort();
  for (const name of names) {
    const base = name.slice(0, -extension.length);
    Deno.test(`import ${tool} ${base} gives the expected v3 log`, async () => {
      const file = new URL(name, dir).pathname;
      const expected: Expected = JSON.parse(
        Deno.readTextFileSync(new URL(`${base}.expected.json`, dir)),
      );
      const result = await Effect.runPromise(
        Effect.result(
          importSession(file, {
            from: tool,
            ...(expected.recover === true ? { recover: true } : {}),
          }),
        ),
      );
      if (expected.refusal !== undefined) {
        assert.equal(result._tag, "Failure");
        if (result._tag !== "Failure") return;
        assert.equal(result.failure._tag, expected.refusal._tag);
        assert.equal(
          "line" in result.failure ? result.failure.line : undefined,
          expected.refusal.line,
        );
        return;
      }
      if (result._tag === "Failure") {
        assert.fail(`refused: ${result.failure.message}`);
      }
      const { session, events, report } = result.success;
      const messages = deriveMessagesWithSources(session.surface).map((
        m,
      ) => [m.seq, m.message.id, m.message.role]);
      assert.deepEqual(messages, expected.messages);
      // Notes are sentences for people: compare their lines and kinds only.
      const actual: Record<string, unknown> = {
        ...report,
        synthesized: report.synthesized.map((e) => [e.line, e.kind]),
        notCarried: report.notCarried.map((e) => [e.line, e.kind]),
        skipped: report.skipped.map((s) => [s.kind, s.lines]),
        opaque: report.opaque.map((s) => [s.kind, s.lines]),
      };
      for (const [key, value] of Object.entries(expected.report ?? {})) {
        assert.deepEqual(actual[key], value, key);
      }
      // The events replay on their own, and repair leaves a clean transcript
      // that each provider's validator accepts.
      assertRepairsClean(events);
    });
  }
}
