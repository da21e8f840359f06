/**
 * The loop the JSON-lines importers share (`src/import/records.ts`): every
 * record is counted by kind, handled by its type's handler, and a type with
 * no handler is reported as unknown and passed over. A type that names a
 * property every object inherits (`constructor`, `toString`, `__proto__`) is
 * no handler and no skip reason: it is unknown like any other.
 */
import {
  type ImportReport,
  importSession,
  type SourceTool,
} from "@palimpsest/session/import";
import { Effect } from "effect";
import assert from "node:assert/strict";

const withFile = async <A>(
  lines: ReadonlyArray<unknown>,
  f: (file: string) => Promise<A>,
): Promise<A> => {
  const dir = Deno.makeTempDirSync();
  try {
    const file = `${dir}/s.jsonl`;
    Deno.writeTextFileSync(
      file,
      lines.map((l) => `${JSON.stringify(l)}\n`).join(""),
    );
    return await f(file);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
};

const report = (
  from: SourceTool,
  lines: ReadonlyArray<unknown>,
): Promise<ImportReport> =>
  withFile(
    lines,
    async (file) =>
      (await Effect.runPromise(importSession(file, { from }))).report,
  );

const INHERITED = ["constructor", "toString", "__proto__"] as const;

/** A source file of each format whose line 2 is of type `type`. */
const sources = (type: string): Record<SourceTool, unknown[]> => ({
  "claude-code": [
    {
      type: "user",
      uuid: "u1",
      sessionId: "s",
      timestamp: "2026-01-01T00:00:00.000Z",
      message: { role: "user", content: "hi" },
    },
    { type, uuid: "x1", timestamp: "2026-01-01T00:00:01.000Z" },
  ],
  codex: [
    {
      type: "session_meta",
      payload: { id: "s", timestamp: "2026-01-01T00:00:00.000Z" },
    },
    { type, payload: {} },
  ],
  pi: [
    {
      type: "session",
      version: 3,
      id: "s",
      timestamp: "2026-01-01T00:00:00.000Z",
    },
    { type, id: "e1", parentId: null },
  ],
  opencode: [],
  // Gemini CLI tells its records by their keys, not by a `type` to look up.
  "gemini-cli": [],
});

for (const from of ["claude-code", "codex", "pi"] as const) {
  Deno.test(`${from}: a line of an inherited property's name is an unknown type, counted`, async () => {
    for (const type of INHERITED) {
      const got = await report(from, sources(type)[from]);
      assert.deepEqual(got.skipped, [], type);
      assert.deepEqual(
        got.notCarried.map((e) => [e.line, e.kind]),
        [[2, type]],
        type,
      );
      assert.match(got.notCarried[0]?.note ?? "", /is not known/);
      assert.equal(got.kinds[type], 1, type);
    }
  });
}

Deno.test("codex: an event_msg of an inherited property's name is a UI event", async () => {
  for (const type of INHERITED) {
    const got = await report("codex", [
      {
        type: "session_meta",
        payload: { id: "s", timestamp: "2026-01-01T00:00:00.000Z" },
      },
      { type: "event_msg", payload: { type } },
    ]);
    assert.deepEqual(
      got.skipped.map((s) => [s.kind, s.reason, s.lines]),
      [[`event_msg/${type}`, "a UI event, not sent to the model", [2]]],
      type,
    );
  }
});

Deno.test("pi: the entries a table skips are counted and reported by kind", async () => {
  const got = await report("pi", [
    {
      type: "session",
      version: 3,
      id: "s",
      timestamp: "2026-01-01T00:00:00.000Z",
    },
    { type: "label", id: "e1", parentId: null },
    { type: "session_info", id: "e2", parentId: "e1" },
  ]);
  assert.deepEqual(
    got.skipped.map((s) => [s.kind, s.lines]),
    [["label", [2]], ["session_info", [3]]],
  );
  assert.deepEqual(got.notCarried, []);
});
