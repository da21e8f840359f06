/**
 * Checked by the tools themselves: sessions exported to pi, Claude Code
 * and Codex resume in those tools, installed from npm at the versions
 * pinned in `tools/peer_tools/` (by `tools/peer_tools/install.sh`, into a
 * scratch folder outside the repository), run offline against a loopback
 * model server of this test's own. Each tool gets a private home holding
 * only the exported file (and its model settings), telemetry and update
 * checks off; the request it then sends, captured by the server, must carry
 * the conversation the library derives: user and assistant texts, tool
 * calls and results by id, the compaction summary where the tool puts it,
 * in order (the tools add their own system reminders and prompts between;
 * reasoning they may drop or resend as they like, and is not checked).
 *
 * - Claude Code: `claude -p … --resume ID`, `ANTHROPIC_BASE_URL` at the
 *   server, `--allowedTools` with `--permission-mode acceptEdits` (it refuses
 *   `--dangerously-skip-permissions` as root).
 * - Codex: `codex exec resume ID …` with a private `CODEX_HOME/config.toml`
 *   pointing the built-in `openai` provider (Responses API) at the server:
 *   Codex 0.171 refuses to move a thread to another provider on resume
 *   ("Cannot change this thread's model provider"), and the exported
 *   rollout names `openai`, Codex's default.
 * - pi: `pi -p … --session FILE` with a custom provider in `models.json`
 *   (Chat Completions) at the server.
 */
import { deriveMessages, type Message } from "@palimpsest/session";
import {
  exportFile,
  importSession,
  type SourceTool,
  type TargetTool,
} from "@palimpsest/session/import";
import { Effect } from "effect";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import assert from "node:assert/strict";
import { peerLogs } from "./_peer_logs.ts";
import { installTools, runTool } from "../_helpers/peer_tools.ts";

/** One comparable item of a conversation. */
type Item =
  | { readonly k: "text"; readonly role: string; readonly text: string }
  | { readonly k: "call" | "result"; readonly id: string };

const rec = (u: unknown): Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)
    ? Object.fromEntries(Object.entries(u))
    : {};
const list = (u: unknown): unknown[] => Array.isArray(u) ? u : [];
const str = (u: unknown): string => typeof u === "string" ? u : "";

/** What the library derives, as items (the system message is the tool's own). */
const derivedItems = (messages: ReadonlyArray<Message>): Item[] =>
  messages.flatMap((m) =>
    m.role === "system" ? [] : m.content.flatMap((b): Item[] => {
      switch (b.type) {
        case "text":
          return b.text.trim() === "" ? [] : [{
            k: "text",
            role: m.role,
            text: b.text.trim(),
          }];
        case "tool-call":
          return [{ k: "call", id: b.id }];
        case "tool-result":
          return [{ k: "result", id: b.toolCallId }];
        default:
          return [];
      }
    })
  );

const text = (role: string, t: unknown): Item[] =>
  str(t).trim() === "" ? [] : [{ k: "text", role, text: str(t).trim() }];

/** Anthropic Messages (Claude Code). */
const anthropicItems = (body: unknown): Item[] =>
  list(rec(body).messages).flatMap((u) => {
    const m = rec(u);
    const role = str(m.role);
    if (typeof m.content === "string") return text(role, m.content);
    return list(m.content).flatMap((v): Item[] => {
      const b = rec(v);
      if (b.type === "text") return text(role, b.text);
      if (b.type === "tool_use") return [{ k: "call", id: str(b.id) }];
      if (b.type === "tool_result") {
        return [{ k: "result", id: str(b.tool_use_id) }];
      }
      return [];
    });
  });

/** OpenAI Responses (Codex). */
const responsesItems = (body: unknown): Item[] =>
  list(rec(body).input).flatMap((u): Item[] => {
    const i = rec(u);
    switch (i.type) {
      case "message":
        return list(i.content).flatMap((p) =>
          text(str(i.role) === "developer" ? "user" : str(i.role), rec(p).text)
        );
      case "function_call":
      case "custom_tool_call":
      case "local_shell_call":
        return [{ k: "call", id: str(i.call_id) }];
      case "function_call_output":
      case "custom_tool_call_output":
        return [{ k: "result", id: str(i.call_id) }];
      default:
        return [];
    }
  });

/** OpenAI Chat Completions (pi's custom provider). */
const chatItems = (body: unknown): Item[] =>
  list(rec(body).messages).flatMap((u): Item[] => {
    const m = rec(u);
    const role = str(m.role);
    if (role === "tool") return [{ k: "result", id: str(m.tool_call_id) }];
    const texts = typeof m.content === "string"
      ? text(role, m.content)
      : list(m.content).flatMap((p) => text(role, rec(p).text));
    const calls = list(m.tool_calls).map((c): Item => ({
      k: "call",
      id: str(rec(c).id),
    }));
    return [...texts, ...calls];
  });

/**
 * Whether `sent` carries `derived` in order: each derived item is found
 * after the one before (the tools add items between); a text matches a
 * sent text of the same role that holds it (a tool may wrap a summary).
 * Gives the first derived item not found.
 */
const missing = (
  derived: ReadonlyArray<Item>,
  sent: ReadonlyArray<Item>,
): { index: number; item: Item } | undefined => {
  let at = 0;
  for (const [index, item] of derived.entries()) {
    const found = sent.findIndex((s, i) =>
      i >= at && s.k === item.k &&
      (s.k === "text" && item.k === "text"
        ? s.role === item.role && s.text.includes(item.text)
        : s.k !== "text" && item.k !== "text" && s.id === item.id)
    );
    if (found < 0) return { index, item };
    at = found + 1;
  }
  return undefined;
};

const sse = (events: ReadonlyArray<unknown>, named: boolean): string =>
  events.map((d) => {
    const type = str(rec(d).type);
    return `${named && type !== "" ? `event: ${type}\n` : ""}data: ${
      typeof d === "string" ? d : JSON.stringify(d)
    }\n\n`;
  }).join("");

/** The answer each API streams back: one text, "resumed". */
const answer = (pathname: string, model: string): string => {
  if (pathname.endsWith("/messages")) {
    return sse([
      {
        type: "message_start",
        message: {
          id: "msg_loopback",
          type: "message",
          role: "assistant",
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 1, output_tokens: 1 },
        },
      },
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "text", text: "" },
      },
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text: "resumed" },
      },
      { type: "content_block_stop", index: 0 },
      {
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: 1 },
      },
      { type: "message_stop" },
    ], true);
  }
  if (pathname.endsWith("/responses")) {
    const item = {
      type: "message",
      id: "msg_loopback",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: "resumed", annotations: [] }],
    };
    const response = {
      id: "resp_loopback",
      object: "response",
      created_at: 0,
      status: "completed",
      model,
      output: [item],
      usage: {
        input_tokens: 1,
        output_tokens: 1,
        total_tokens: 2,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens_details: { reasoning_tokens: 0 },
      },
    };
    return sse([
      {
        type: "response.created",
        response: { ...response, status: "in_progress", output: [] },
      },
      {
        type: "response.output_item.added",
        output_index: 0,
        item: { ...item, content: [] },
      },
      {
        type: "response.output_text.delta",
        output_index: 0,
        content_index: 0,
        item_id: item.id,
        delta: "resumed",
      },
      { type: "response.output_item.done", output_index: 0, item },
      { type: "response.completed", response },
    ], true);
  }
  const chunk = (delta: unknown, finish: string | null) => ({
    id: "chatcmpl-loopback",
    object: "chat.completion.chunk",
    created: 0,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  return sse([
    chunk({ role: "assistant", content: "resumed" }, null),
    chunk({}, "stop"),
    "[DONE]",
  ], false);
};

/** A loopback model server that records the body of every model request. */
const loopback = () => {
  const bodies: Array<{ path: string; body: unknown }> = [];
  const server = Deno.serve({
    hostname: "127.0.0.1",
    port: 0,
    onListen: () => {},
  }, async (req) => {
    const { pathname } = new URL(req.url);
    const raw = req.method === "POST" ? await req.text() : "";
    if (raw === "") {
      // Codex tries a WebSocket first; a refusal sends it to HTTP.
      return new Response("", { status: 404 });
    }
    const body: unknown = JSON.parse(raw);
    bodies.push({ path: pathname, body });
    return new Response(answer(pathname, str(rec(body).model)), {
      headers: { "content-type": "text/event-stream" },
    });
  });
  return { bodies, server, url: `http://127.0.0.1:${server.addr.port}` };
};

interface Run {
  readonly from: SourceTool;
  readonly file: string;
  readonly to: TargetTool;
}

const runs: ReadonlyArray<Run> = [
  { from: "pi", file: "pi/branched.jsonl", to: "pi" },
  { from: "claude-code", file: "claude-code/short.jsonl", to: "claude-code" },
  { from: "codex", file: "codex/images.jsonl", to: "codex" },
  // A compaction: its summary where each tool puts it.
  { from: "claude-code", file: "claude-code/compact.jsonl", to: "claude-code" },
  { from: "claude-code", file: "claude-code/compact.jsonl", to: "pi" },
  { from: "claude-code", file: "claude-code/compact.jsonl", to: "codex" },
  // Across tools.
  { from: "pi", file: "pi/branched.jsonl", to: "claude-code" },
  { from: "pi", file: "pi/branched.jsonl", to: "codex" },
];

/** The command line and settings that resume `id` in `to`, from `home`. */
const command = (
  bin: string,
  to: TargetTool,
  home: string,
  id: string,
  file: string,
  url: string,
): { args: string[]; env: Record<string, string> } => {
  const quiet = {
    HOME: home,
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    PI_OFFLINE: "1",
    NO_COLOR: "1",
  };
  switch (to) {
    case "claude-code":
      return {
        args: [
          path.join(bin, "claude"),
          "-p",
          "continue",
          "--resume",
          id,
          "--allowedTools",
          "Read",
          "--permission-mode",
          "acceptEdits",
          "--model",
          "claude-sonnet-4-5",
        ],
        env: {
          ...quiet,
          ANTHROPIC_BASE_URL: url,
          ANTHROPIC_API_KEY: "sk-loopback",
        },
      };
    case "codex":
      fs.writeFileSync(
        path.join(home, ".codex", "config.toml"),
        `model = "gpt-5-codex"\nopenai_base_url = "${url}/v1"\n` +
          `check_for_update_on_startup = false\n[analytics]\nenabled = false\n`,
      );
      return {
        args: [
          path.join(bin, "codex"),
          "exec",
          "--skip-git-repo-check",
          "resume",
          id,
          "continue",
        ],
        env: {
          ...quiet,
          CODEX_HOME: path.join(home, ".codex"),
          OPENAI_API_KEY: "sk-loopback",
        },
      };
    case "pi":
      fs.writeFileSync(
        path.join(home, ".pi", "agent", "models.json"),
        JSON.stringify({
          providers: {
            loopback: {
              baseUrl: `${url}/v1`,
              api: "openai-completions",
              apiKey: "LOOPBACK_KEY",
              models: [{
                id: "loopback-model",
                name: "loopback model",
                reasoning: false,
                input: ["text", "image"],
                contextWindow: 200000,
                maxTokens: 8192,
                cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
              }],
            },
          },
        }),
      );
      return {
        args: [
          path.join(bin, "pi"),
          "--offline",
          "--provider",
          "loopback",
          "--model",
          "loopback-model",
          "--session",
          file,
          "-p",
          "continue",
        ],
        env: { ...quiet, LOOPBACK_KEY: "sk-loopback" },
      };
  }
};

Deno.test("exported sessions resume in pi, Claude Code and Codex, whose next request carries what the library derives", async (t) => {
  const bin = await installTools();
  const base = peerLogs();
  const { bodies, server, url } = loopback();
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "tools-resume-"));
  try {
    for (const [n, run] of runs.entries()) {
      await t.step(`${run.file} resumed in ${run.to}`, async () => {
        const home = path.join(scratch, `home-${n}`);
        const cwd = path.join(scratch, `work-${n}`);
        fs.mkdirSync(home);
        fs.mkdirSync(cwd);
        const imported = await Effect.runPromise(
          importSession(path.join(base, run.file), { from: run.from }),
        );
        const written = await Effect.runPromise(
          exportFile(imported.session, { to: run.to, out: home, cwd }),
        );
        const { args, env } = command(
          bin,
          run.to,
          home,
          written.id,
          written.file,
          url,
        );
        const seen = bodies.length;
        const [program = "", ...rest] = args;
        const { success, said } = await runTool(program, rest, { cwd, env });
        assert.ok(success, `${args.join(" ")} failed:\n${said}`);
        assert.match(said, /resumed/);
        const sent = bodies.slice(seen);
        assert.ok(sent.length > 0, `${run.to} sent no model request`);
        const request = sent[sent.length - 1]?.body;
        const items = run.to === "claude-code"
          ? anthropicItems(request)
          : run.to === "codex"
          ? responsesItems(request)
          : chatItems(request);
        const derived = derivedItems(
          deriveMessages(imported.session.surface),
        );
        assert.ok(derived.length > 0);
        assert.deepEqual(missing(derived, items), undefined);
        // The prompt the tool was given comes after the conversation.
        assert.deepEqual(items[items.length - 1], {
          k: "text",
          role: "user",
          text: "continue",
        });
        console.log(
          `${run.file} → ${run.to} (${written.id}): ${derived.length} derived items found in order among the ${items.length} the tool sent`,
        );
      });
    }
  } finally {
    await server.shutdown();
    fs.rmSync(scratch, { recursive: true, force: true });
  }
});
