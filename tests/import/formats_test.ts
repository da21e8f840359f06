/**
 * Each importer knows its own format: every real file under
 * `../shared/peer-logs/` imports with the importer of the tool that wrote it
 * and is refused by every other one (`ImportNotThisFormat`, naming the tool
 * it looks like and the `--from` to use), strictly and under `recover`.
 * opencode's own storage (a folder or one of its files) gets the hint to run
 * `opencode export`; a palimpsest log that it needs no import; a file of no
 * known format is refused, never an empty success; a damaged file of the
 * right format imports as before.
 */
import {
  type ImportError,
  importSession,
  type SessionFormat,
  sessionFormatOf,
  sniffSessionFormat,
  type SourceTool,
  sourceTools,
} from "@palimpsest/session/import";
import { Effect } from "effect";
import * as fs from "node:fs";
import * as path from "node:path";
import assert from "node:assert/strict";
import { peerLogs, walk } from "./_peer_logs.ts";
import { claudeAssistant, claudeUser } from "./_claude.ts";

const attempt = (file: string, from: SourceTool, recover = false) =>
  Effect.runPromise(Effect.result(importSession(file, { from, recover })));

/** The refusal of an import, failing the test if it succeeded. */
const refusal = async (
  file: string,
  from: SourceTool,
  recover = false,
): Promise<ImportError> => {
  const result = await attempt(file, from, recover);
  assert.equal(
    result._tag,
    "Failure",
    `${file} imported as ${from}${recover ? " with recover" : ""}`,
  );
  if (result._tag !== "Failure") throw new Error("unreachable");
  return result.failure;
};

/** Asserts a refusal names `looksLike` and says what to do. */
const assertNotThisFormat = (
  error: ImportError,
  from: SourceTool,
  looksLike: SessionFormat,
  hint: RegExp,
): void => {
  assert.equal(error._tag, "ImportNotThisFormat", error.message);
  if (error._tag !== "ImportNotThisFormat") return;
  assert.equal(error.from, from);
  assert.equal(error.looksLike, looksLike);
  assert.match(error.hint, hint);
  assert.match(error.message, hint);
};

const toolOf = (rel: string): SourceTool => {
  const tool = rel.split("/").find((part): part is SourceTool =>
    sourceTools.some((t) => t === part)
  );
  assert.ok(tool !== undefined, rel);
  return tool;
};

Deno.test("every real file × every importer: its own imports, every other refuses naming it", async (t) => {
  const base = peerLogs();
  const files = walk(base).filter((rel) =>
    !rel.startsWith("expected/") && !rel.endsWith(".md")
  );
  assert.ok(files.length >= 12, `found ${files.length} study files`);
  for (const rel of files) {
    await t.step(rel, async () => {
      const file = path.join(base, rel);
      const tool = toolOf(rel);
      assert.equal(sniffSessionFormat(file), tool);
      // The damaged pi file is refused strictly by its line, as before.
      const damaged = rel.startsWith("damaged/");
      const own = await attempt(file, tool, damaged);
      assert.equal(own._tag, "Success", rel);
      if (damaged) {
        const strict = await refusal(file, tool);
        assert.equal(strict._tag, "ImportLineNotJson");
      }
      for (const from of sourceTools.filter((f) => f !== tool)) {
        for (const recover of [false, true]) {
          assertNotThisFormat(
            await refusal(file, from, recover),
            from,
            tool,
            new RegExp(`use --from ${tool}$`),
          );
        }
      }
    });
  }
});

/** A temporary folder, removed after `f`. */
const withDir = async (f: (dir: string) => Promise<void>): Promise<void> => {
  const dir = Deno.makeTempDirSync();
  try {
    await f(dir);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
};

const pretty = (value: unknown): string =>
  `${JSON.stringify(value, null, 2)}\n`;

Deno.test("opencode's storage, a folder or one of its files, is refused with the hint to run opencode export", () =>
  withDir(async (dir) => {
    // Given opencode's data folder, laid out as opencode writes it
    const storage = path.join(dir, "opencode", "storage");
    const id = "ses_3f2a9c1bffeABCdef";
    const session = path.join(storage, "session", "0123abcd", `${id}.json`);
    const messages = path.join(storage, "message", id);
    const message = path.join(messages, "msg_c0ffee01ffeXYZ.json");
    const part = path.join(storage, "part", "msg_c0ffee01ffeXYZ", "prt_1.json");
    for (const f of [session, message, part]) {
      fs.mkdirSync(path.dirname(f), { recursive: true });
    }
    fs.writeFileSync(
      session,
      pretty({
        id,
        projectID: "0123abcd",
        directory: "/w",
        title: "t",
        time: { created: 1 },
      }),
    );
    fs.writeFileSync(
      message,
      pretty({
        id: "msg_c0ffee01ffeXYZ",
        sessionID: id,
        role: "user",
        time: { created: 1 },
      }),
    );
    fs.writeFileSync(
      part,
      pretty({
        id: "prt_1",
        sessionID: id,
        messageID: "msg_c0ffee01ffeXYZ",
        type: "text",
        text: "hi",
      }),
    );
    const cases: ReadonlyArray<readonly [string, RegExp]> = [
      [path.join(dir, "opencode"), /run `opencode export <id>`/],
      [storage, /run `opencode export <id>`/],
      [messages, new RegExp(`run \`opencode export ${id}\``)],
      [session, new RegExp(`run \`opencode export ${id}\``)],
      [message, new RegExp(`run \`opencode export ${id}\``)],
      [part, /run `opencode export <id>`/],
    ];
    for (const [target, hint] of cases) {
      assert.equal(sniffSessionFormat(target), "opencode-storage", target);
      for (const from of sourceTools) {
        for (const recover of [false, true]) {
          // Then each importer refuses it, saying to export the session
          assertNotThisFormat(
            await refusal(target, from, recover),
            from,
            "opencode-storage",
            hint,
          );
        }
      }
    }
  }));

Deno.test("a palimpsest log is refused by every importer: it needs no import", () =>
  withDir(async (dir) => {
    const file = path.join(dir, "s.jsonl");
    fs.writeFileSync(
      file,
      [
        { type: "session", version: 3, id: "s", createdAt: 1, isSeeded: false },
        { type: "turn/start", seq: 0, time: 2, data: { turn: 0 } },
      ].map((r) => JSON.stringify(r)).join("\n") + "\n",
    );
    assert.equal(sniffSessionFormat(file), "palimpsest");
    for (const from of sourceTools) {
      assertNotThisFormat(
        await refusal(file, from),
        from,
        "palimpsest",
        /needs no import/,
      );
    }
  }));

Deno.test("a file of JSON records of no known format is refused, never imported empty", () =>
  withDir(async (dir) => {
    const file = path.join(dir, "x.jsonl");
    fs.writeFileSync(file, '{"hello":"world"}\n{"type":"note","n":1}\n');
    assert.equal(sniffSessionFormat(file), undefined);
    for (const from of sourceTools) {
      // (To opencode, two lines are a document broken at line 2.)
      const strict = await refusal(file, from);
      assert.equal(
        strict._tag,
        from === "opencode" ? "ImportLineNotJson" : "ImportNotASession",
        `${from}: ${strict._tag}`,
      );
      const recovered = await refusal(file, from, true);
      assert.equal(recovered._tag, "ImportNoSession", from);
    }
  }));

Deno.test("a damaged file of the right format imports as before: its bad first line is no other format", () =>
  withDir(async (dir) => {
    const lines: Record<SourceTool, ReadonlyArray<unknown>> = {
      "pi": [],
      "opencode": [],
      "gemini-cli": [
        {
          sessionId: "g1",
          projectHash: "p",
          startTime: "2026-01-01T00:00:00Z",
        },
        {
          id: "m1",
          timestamp: "2026-01-01T00:00:01Z",
          type: "user",
          content: [{ text: "hi" }],
        },
      ],
      "claude-code": [
        claudeUser("u1", "hi"),
        claudeAssistant("a1", "hello"),
      ],
      "codex": [
        { type: "session_meta", payload: { id: "cx" } },
        {
          type: "response_item",
          payload: {
            type: "message",
            role: "user",
            content: [{ type: "input_text", text: "hi" }],
          },
        },
      ],
    };
    for (const tool of ["claude-code", "codex", "gemini-cli"] as const) {
      // Given two records glued together on the first line
      const [a, b] = lines[tool].map((r) => JSON.stringify(r));
      const file = path.join(dir, `${tool}.jsonl`);
      fs.writeFileSync(file, `${a}${b}\n${b}\n`);
      // Then the strict import still names the line, and recover imports
      const strict = await refusal(file, tool);
      assert.equal(strict._tag, "ImportLineNotJson");
      const recovered = await attempt(file, tool, true);
      assert.equal(recovered._tag, "Success", tool);
    }
  }));

Deno.test("a pretty-printed export longer than the sniffed start is told by its first key", () =>
  withDir(async (dir) => {
    const file = path.join(dir, "export.json");
    const big = "x".repeat(1_200_000);
    fs.writeFileSync(
      file,
      pretty({
        info: { id: "ses_1", time: { created: 1 } },
        messages: [{
          info: { id: "msg_1", role: "user", time: { created: 2 } },
          parts: [{ id: "prt_1", type: "text", text: big }],
        }],
      }),
    );
    assert.equal(sniffSessionFormat(file), "opencode");
    assertNotThisFormat(
      await refusal(file, "codex"),
      "codex",
      "opencode",
      /use --from opencode$/,
    );
    assert.equal((await attempt(file, "opencode"))._tag, "Success");
  }));

Deno.test("Gemini CLI's files are told apart: its JSON lines, its whole-JSON file, and one too long to read whole by its first keys", () =>
  withDir((dir) => {
    const fixtures = new URL("../fixtures/import/gemini-cli/", import.meta.url);
    for (const name of ["real.jsonl", "patches.jsonl", "whole.json"]) {
      assert.equal(
        sniffSessionFormat(new URL(name, fixtures).pathname),
        "gemini-cli",
        name,
      );
    }
    const file = path.join(dir, "session.json");
    fs.writeFileSync(
      file,
      pretty({
        sessionId: "g",
        projectHash: "h",
        messages: [{ id: "m", type: "user", content: "x".repeat(1_200_000) }],
      }),
    );
    assert.equal(sniffSessionFormat(file), "gemini-cli");
    return Promise.resolve();
  }));

Deno.test("sessionFormatOf tells each tool's records apart", () => {
  const cases: ReadonlyArray<readonly [unknown, SessionFormat | undefined]> = [
    [{ type: "session", version: 3, id: "a", timestamp: "t", cwd: "/" }, "pi"],
    [{ type: "session", id: "a", timestamp: "t", cwd: "/" }, "pi"],
    [{ type: "message", message: { role: "user", content: "hi" } }, "pi"],
    [{ type: "model_change", provider: "p", modelId: "m" }, "pi"],
    [{ type: "session", version: 3, id: "a", createdAt: 1 }, "palimpsest"],
    [{ type: "user/message", seq: 4, time: 1, data: {} }, "palimpsest"],
    [{ type: "user", message: { role: "user", content: "hi" } }, "claude-code"],
    [{ type: "system", subtype: "compact_boundary" }, "claude-code"],
    [{ type: "file-history-snapshot", messageId: "m" }, "claude-code"],
    [{ type: "session_meta", payload: { id: "x" } }, "codex"],
    [{ type: "event_msg", payload: { type: "task_started" } }, "codex"],
    [{ info: { id: "ses_1" }, messages: [] }, "opencode"],
    [{ id: "ses_1abc", projectID: "p", time: {} }, "opencode-storage"],
    [{ id: "msg_1abc", sessionID: "ses_1", role: "user" }, "opencode-storage"],
    [{ id: "prt_1abc", messageID: "msg_1", type: "text" }, "opencode-storage"],
    [{ sessionId: "g", projectHash: "h", startTime: "t" }, "gemini-cli"],
    [{ sessionId: "g", projectHash: "h", messages: [] }, "gemini-cli"],
    [{ id: "m", timestamp: "t", type: "user", content: [] }, "gemini-cli"],
    [{ id: "m", timestamp: "t", type: "gemini", content: "" }, "gemini-cli"],
    [{ id: "m", timestamp: "t", type: "info", content: "x" }, "gemini-cli"],
    [{ $set: { lastUpdated: "t" } }, "gemini-cli"],
    [{ $rewindTo: "m" }, "gemini-cli"],
    // Near misses: a raw item without its envelope, a bare object, a value.
    [{ type: "message", role: "user", content: [] }, undefined],
    [{ type: "response_item" }, undefined],
    [{ type: "user" }, undefined],
    [{ type: "gemini", content: "" }, undefined],
    [{ sessionId: "g" }, undefined],
    [{ id: "ses_1abc" }, undefined],
    [{ hello: "world" }, undefined],
    [[1, 2], undefined],
    ["session", undefined],
    [null, undefined],
  ];
  for (const [value, format] of cases) {
    assert.equal(sessionFormatOf(value), format, JSON.stringify(value));
  }
});
