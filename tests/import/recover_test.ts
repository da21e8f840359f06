/**
 * `recover` never turns an unreadable file into an empty success: a file in
 * which no line is a session record is refused ("No session found in
 * FILE"); and a bad line gets one label, whether it parses or not.
 */
import { importSession, type SourceTool } from "@palimpsest/session/import";
import { Effect } from "effect";
import assert from "node:assert/strict";

const withFile = async <A>(
  text: string,
  f: (file: string) => Promise<A>,
): Promise<A> => {
  const dir = Deno.makeTempDirSync();
  try {
    const file = `${dir}/s.jsonl`;
    Deno.writeTextFileSync(file, text);
    return await f(file);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
};

const rollout = [
  {
    type: "session_meta",
    payload: {
      id: "cx",
      timestamp: "2026-01-01T00:00:00.000Z",
      // Pretty-printed, its last element is a line that parses.
      ids: [1, 2],
    },
  },
  {
    type: "response_item",
    payload: {
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: "hi" }],
    },
  },
];

for (const from of ["codex", "claude-code", "pi"] satisfies SourceTool[]) {
  Deno.test(`${from}: a file re-indented as pretty JSON is refused, with recover too`, async () => {
    const pretty = rollout.map((r) => JSON.stringify(r, null, 2)).join("\n");
    await withFile(`${pretty}\n`, async (file) => {
      const strict = await Effect.runPromise(
        Effect.flip(importSession(file, { from })),
      );
      assert.ok(
        strict._tag === "ImportLineNotJson" ||
          strict._tag === "ImportNotASession",
        strict._tag,
      );
      const recovered = await Effect.runPromise(
        Effect.flip(importSession(file, { from, recover: true })),
      );
      assert.equal(recovered._tag, "ImportNoSession");
      assert.match(recovered.message, /^No session found in /);
    });
  });
}

Deno.test("a line that parses but is no record gets the same single label as one that does not parse", async () => {
  const lines = [
    JSON.stringify(rollout[0]),
    "42",
    "{not json",
    JSON.stringify(rollout[1]),
  ];
  await withFile(`${lines.join("\n")}\n`, async (file) => {
    const { report } = await Effect.runPromise(
      importSession(file, { from: "codex", recover: true }),
    );
    assert.deepEqual(report.notCarried.map((e) => [e.line, e.kind]), [
      [2, "not-json"],
      [3, "not-json"],
    ]);
  });
});
