/**
 * Drives the pinned opencode (`tools/peer_tools/`) through one short
 * session against a loopback model server of its own, offline, in a private
 * home: a user message, a `read` tool call and its result, an assistant
 * text. opencode then holds the session in its SQLite database
 * (`opencode.db`), and `opencode export` prints the same session as JSON.
 * The database fixture under `tests/fixtures/import/opencode/` is written by
 * this (`tools/peer_tools/opencode_fixture.sh`), and the real-writer test
 * runs it afresh.
 *
 * @module
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { installTools, list, rec, runTool } from "./peer_tools.ts";

/** The prompt, the file the model reads and its answer. */
export const OPENCODE_SCRIPT = {
  prompt: "What does notes.txt say?",
  file: "notes.txt",
  contents: "The loopback server answers every request.",
  answer: "notes.txt says the loopback server answers every request.",
  title: "Reading notes",
} as const;

const chunk = (delta: unknown, finish: string | null, usage?: unknown) => ({
  id: "chatcmpl-loopback",
  object: "chat.completion.chunk",
  created: 1_767_225_600,
  model: "loopback-model",
  choices: [{ index: 0, delta, finish_reason: finish }],
  ...(usage === undefined ? {} : { usage }),
});

const usage = { prompt_tokens: 120, completion_tokens: 12, total_tokens: 132 };

const sse = (events: ReadonlyArray<unknown>): string =>
  [...events.map((e) => JSON.stringify(e)), "[DONE]"].map((d) =>
    `data: ${d}\n\n`
  ).join("");

/**
 * The answer to one Chat Completions request: a title for opencode's title
 * request (no tools), a `read` call while no tool result is in the
 * conversation, then the final text.
 */
const answer = (body: unknown, file: string): string => {
  const b = rec(body);
  const messages = list(b.messages).map(rec);
  if (list(b.tools).length === 0) {
    return sse([
      chunk({ role: "assistant", content: OPENCODE_SCRIPT.title }, null),
      chunk({}, "stop", usage),
    ]);
  }
  if (!messages.some((m) => m.role === "tool")) {
    return sse([
      chunk({ role: "assistant", content: "" }, null),
      chunk({
        tool_calls: [{
          index: 0,
          id: "call_loopback_read",
          type: "function",
          function: { name: "read", arguments: "" },
        }],
      }, null),
      chunk({
        tool_calls: [{
          index: 0,
          function: { arguments: JSON.stringify({ filePath: file }) },
        }],
      }, null),
      chunk({}, "tool_calls", usage),
    ]);
  }
  return sse([
    chunk({ role: "assistant", content: "" }, null),
    chunk({ content: OPENCODE_SCRIPT.answer }, null),
    chunk({}, "stop", usage),
  ]);
};

/** What one driven session left behind. */
export interface OpencodeSession {
  /** The session's id. */
  readonly id: string;
  /** opencode's database, in the private home. */
  readonly db: string;
  /** What `opencode export ID` printed, from the same home. */
  readonly exported: string;
}

/**
 * Runs the pinned opencode in `scratch` (a private home and working folder)
 * through the scripted session, then exports it.
 *
 * @param bin The folder of the pinned tools' commands.
 * @param scratch An empty folder.
 * @returns The session id, its database and its export.
 */
export const driveOpencode = async (
  bin: string,
  scratch: string,
): Promise<OpencodeSession> => {
  const home = path.join(scratch, "home");
  const cwd = path.join(scratch, "work");
  fs.mkdirSync(home);
  fs.mkdirSync(cwd);
  const file = path.join(cwd, OPENCODE_SCRIPT.file);
  fs.writeFileSync(file, `${OPENCODE_SCRIPT.contents}\n`);
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: () => {},
  }, async (req) => {
    const raw = req.method === "POST" ? await req.text() : "";
    if (raw === "") return new Response("", { status: 404 });
    return new Response(answer(JSON.parse(raw), file), {
      headers: { "content-type": "text/event-stream" },
    });
  });
  const config = path.join(home, ".config");
  fs.mkdirSync(path.join(config, "opencode"), { recursive: true });
  fs.writeFileSync(
    path.join(config, "opencode", "opencode.json"),
    JSON.stringify({
      $schema: "https://opencode.ai/config.json",
      autoupdate: false,
      share: "disabled",
      model: "loopback/loopback-model",
      small_model: "loopback/loopback-model",
      provider: {
        loopback: {
          npm: "@ai-sdk/openai-compatible",
          name: "loopback",
          options: {
            baseURL: `http://127.0.0.1:${server.addr.port}/v1`,
            apiKey: "sk-loopback",
          },
          models: {
            "loopback-model": { name: "loopback model", tool_call: true },
          },
        },
      },
    }),
  );
  const env = {
    HOME: home,
    XDG_CONFIG_HOME: config,
    XDG_DATA_HOME: path.join(home, ".local", "share"),
    XDG_CACHE_HOME: path.join(home, ".cache"),
    XDG_STATE_HOME: path.join(home, ".local", "state"),
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    OPENCODE_DISABLE_SHARE: "1",
    // opencode takes its project from PWD, not from the process's folder.
    PWD: cwd,
    // It installs its plugin package into the config folder with npm: from
    // the empty cache only, so that nothing is fetched.
    npm_config_offline: "true",
    NO_COLOR: "1",
  };
  const opencode = async (args: string[]): Promise<string> => {
    const run = await runTool(path.join(bin, "opencode"), args, cwd, env);
    assert.ok(run.success, `opencode ${args.join(" ")} failed:\n${run.said}`);
    return run.stdout;
  };
  try {
    // One word an argument: `opencode run` quotes an argument with spaces.
    await opencode(["run", ...OPENCODE_SCRIPT.prompt.split(" ")]);
    const listed = await opencode(["session", "list", "--format", "json"]);
    const sessions = list(JSON.parse(listed)).map(rec);
    assert.equal(sessions.length, 1, listed);
    const id = String(sessions[0]?.id);
    const exported = await opencode(["export", id]);
    const db = path.join(env.XDG_DATA_HOME, "opencode", "opencode.db");
    assert.ok(fs.existsSync(db), `opencode wrote no ${db}`);
    return { id, db, exported };
  } finally {
    await server.shutdown();
  }
};

/**
 * Copies opencode's database (with what its write-ahead log holds) into one
 * self-contained file in rollback-journal mode, so that reading it read-only
 * leaves no `-wal` or `-shm` file beside it.
 *
 * @param db opencode's database.
 * @param out The new file (must not exist).
 */
export const copyDatabase = async (db: string, out: string): Promise<void> => {
  const { DatabaseSync } = await import("node:sqlite");
  const source = new DatabaseSync(db);
  try {
    source.exec(`VACUUM INTO '${out.replaceAll("'", "''")}'`);
  } finally {
    source.close();
  }
  const copy = new DatabaseSync(out);
  try {
    copy.exec("PRAGMA journal_mode = DELETE");
  } finally {
    copy.close();
  }
};

// `deno run -A tests/_helpers/opencode_writer.ts DIR` (what
// tools/peer_tools/opencode_fixture.sh runs): writes DIR/NAME.db and
// DIR/NAME.export.json from a fresh session of the pinned opencode.
if (import.meta.main) {
  const [dir = "", name = "read-tool"] = Deno.args;
  assert.ok(dir !== "", "usage: opencode_writer.ts DIR [NAME]");
  const scratch = fs.mkdtempSync(
    path.join(Deno.env.get("TMPDIR") ?? "/tmp", "opencode-writer-"),
  );
  try {
    const session = await driveOpencode(
      await installTools({ writers: true }),
      scratch,
    );
    const db = path.join(dir, `${name}.db`);
    fs.rmSync(db, { force: true });
    await copyDatabase(session.db, path.resolve(db));
    fs.writeFileSync(path.join(dir, `${name}.export.json`), session.exported);
    console.log(`${session.id}: ${db}`);
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}
