/**
 * The agent tools `tools/peer_tools/` pins (Claude Code, Codex, pi, opencode,
 * Gemini CLI),
 * installed by its `install.sh` into a scratch folder outside the
 * repository (an install whose lock matches is kept), and what runs them
 * offline: a loopback model server that records every model request and
 * streams back the reply a script chooses, and each tool's private settings
 * pointing at it (telemetry and update checks off).
 *
 * - Claude Code: `ANTHROPIC_BASE_URL` at the server (Anthropic Messages).
 * - Codex: a private `CODEX_HOME/config.toml` pointing the built-in `openai`
 *   provider (Responses API) at the server: Codex 0.171 refuses to move a
 *   thread to another provider on resume, and `openai` is its default.
 * - pi: a custom provider in `models.json` (Chat Completions).
 *
 * @module
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A tool `tools/peer_tools/` pins. */
export type PeerTool = "claude-code" | "codex" | "pi";

/**
 * Installs a set of pinned tools (or finds them installed); their bin
 * folder: the export targets (Claude Code, Codex, pi), or with `writers`
 * the tools only the fixture recordings run (opencode, Gemini CLI).
 */
export const installTools = async (
  options: { readonly writers?: boolean } = {},
): Promise<string> => {
  const out = await new Deno.Command("bash", {
    args: [
      path.join(ROOT, "tools/peer_tools/install.sh"),
      ...(options.writers === true ? ["--writers"] : []),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  assert.ok(
    out.success,
    `tools/peer_tools/install.sh failed: ${
      new TextDecoder().decode(out.stderr)
    }`,
  );
  return text.split("\n").pop() ?? "";
};

/** A plain record of `u` (empty when it is not an object). */
export const rec = (u: unknown): Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)
    ? Object.fromEntries(Object.entries(u))
    : {};
/** `u` when it is an array, else empty. */
export const list = (u: unknown): unknown[] => Array.isArray(u) ? u : [];
/** `u` when it is a string, else empty. */
export const str = (u: unknown): string => typeof u === "string" ? u : "";

/** What the server streams back: a text, or one call of a tool. */
export type Reply =
  | { readonly type: "text"; readonly text: string }
  | {
    readonly type: "call";
    readonly id: string;
    readonly name: string;
    readonly input: Readonly<Record<string, unknown>>;
  };

const sse = (events: ReadonlyArray<unknown>, named: boolean): string =>
  events.map((d) => {
    const type = str(rec(d).type);
    return `${named && type !== "" ? `event: ${type}\n` : ""}data: ${
      typeof d === "string" ? d : JSON.stringify(d)
    }\n\n`;
  }).join("");

const anthropicStream = (model: string, reply: Reply): string => {
  const block = reply.type === "text"
    ? { type: "text", text: "" }
    : { type: "tool_use", id: reply.id, name: reply.name, input: {} };
  const delta = reply.type === "text"
    ? { type: "text_delta", text: reply.text }
    : { type: "input_json_delta", partial_json: JSON.stringify(reply.input) };
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
    { type: "content_block_start", index: 0, content_block: block },
    { type: "content_block_delta", index: 0, delta },
    { type: "content_block_stop", index: 0 },
    {
      type: "message_delta",
      delta: {
        stop_reason: reply.type === "text" ? "end_turn" : "tool_use",
        stop_sequence: null,
      },
      usage: { output_tokens: 1 },
    },
    { type: "message_stop" },
  ], true);
};

const responsesStream = (model: string, reply: Reply): string => {
  const item = reply.type === "text"
    ? {
      type: "message",
      id: "msg_loopback",
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: reply.text, annotations: [] }],
    }
    : {
      type: "function_call",
      id: "fc_loopback",
      status: "completed",
      call_id: reply.id,
      name: reply.name,
      arguments: JSON.stringify(reply.input),
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
      item: reply.type === "text" ? { ...item, content: [] } : item,
    },
    ...(reply.type === "text"
      ? [{
        type: "response.output_text.delta",
        output_index: 0,
        content_index: 0,
        item_id: item.id,
        delta: reply.text,
      }]
      : []),
    { type: "response.output_item.done", output_index: 0, item },
    { type: "response.completed", response },
  ], true);
};

const chatStream = (model: string, reply: Reply): string => {
  const chunk = (delta: unknown, finish: string | null) => ({
    id: "chatcmpl-loopback",
    object: "chat.completion.chunk",
    created: 0,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  return sse([
    reply.type === "text"
      ? chunk({ role: "assistant", content: reply.text }, null)
      : chunk({
        role: "assistant",
        tool_calls: [{
          index: 0,
          id: reply.id,
          type: "function",
          function: {
            name: reply.name,
            arguments: JSON.stringify(reply.input),
          },
        }],
      }, null),
    chunk({}, reply.type === "text" ? "stop" : "tool_calls"),
    "[DONE]",
  ], false);
};

/** The stream each API sends for `reply`, chosen by the request's path. */
export const replyStream = (
  pathname: string,
  model: string,
  reply: Reply,
): string =>
  pathname.endsWith("/messages")
    ? anthropicStream(model, reply)
    : pathname.endsWith("/responses")
    ? responsesStream(model, reply)
    : chatStream(model, reply);

/** A recorded model request. */
export interface Sent {
  readonly path: string;
  readonly body: unknown;
}

/** A running loopback model server. */
export interface Loopback {
  readonly bodies: Array<Sent>;
  readonly server: Deno.HttpServer;
  readonly url: string;
}

/**
 * A loopback model server that records the body of every model request and
 * streams back what `choose` picks for it (by default one text, "resumed").
 */
export const loopback = (
  choose: (sent: Sent) => Reply = () => ({ type: "text", text: "resumed" }),
): Loopback => {
  const bodies: Array<Sent> = [];
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
    const sent = { path: pathname, body: JSON.parse(raw) };
    bodies.push(sent);
    return new Response(
      replyStream(pathname, str(rec(sent.body).model), choose(sent)),
      { headers: { "content-type": "text/event-stream" } },
    );
  });
  return { bodies, server, url: `http://127.0.0.1:${server.addr.port}` };
};

/**
 * The program of `tool`, and the environment (with settings written into
 * `home`) that runs it offline against the loopback server at `url`; the
 * caller adds the tool's own arguments after `args`.
 */
export const toolSetup = (
  bin: string,
  tool: PeerTool,
  home: string,
  url: string,
): { program: string; args: string[]; env: Record<string, string> } => {
  const quiet = {
    HOME: home,
    DISABLE_TELEMETRY: "1",
    DISABLE_AUTOUPDATER: "1",
    DISABLE_ERROR_REPORTING: "1",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    PI_OFFLINE: "1",
    NO_COLOR: "1",
  };
  switch (tool) {
    case "claude-code":
      return {
        program: path.join(bin, "claude"),
        args: ["--model", "claude-sonnet-4-5"],
        env: {
          ...quiet,
          ANTHROPIC_BASE_URL: url,
          ANTHROPIC_API_KEY: "sk-loopback",
        },
      };
    case "codex":
      fs.mkdirSync(path.join(home, ".codex"), { recursive: true });
      fs.writeFileSync(
        path.join(home, ".codex", "config.toml"),
        `model = "gpt-5-codex"\nopenai_base_url = "${url}/v1"\n` +
          `check_for_update_on_startup = false\n[analytics]\nenabled = false\n`,
      );
      return {
        program: path.join(bin, "codex"),
        args: [],
        env: {
          ...quiet,
          CODEX_HOME: path.join(home, ".codex"),
          OPENAI_API_KEY: "sk-loopback",
        },
      };
    case "pi":
      fs.mkdirSync(path.join(home, ".pi", "agent"), { recursive: true });
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
        program: path.join(bin, "pi"),
        args: [
          "--offline",
          "--provider",
          "loopback",
          "--model",
          "loopback-model",
        ],
        env: { ...quiet, LOOPBACK_KEY: "sk-loopback" },
      };
  }
};

/** What a tool's run printed. */
export interface ToolRun {
  /** Whether it exited with 0. */
  readonly success: boolean;
  /** Its standard output. */
  readonly stdout: string;
  /** Its standard output, then its standard error. */
  readonly said: string;
}

/** Runs `program` in `cwd` (three minutes at most); what it printed. */
export const runTool = async (
  program: string,
  args: ReadonlyArray<string>,
  cwd: string,
  env: Record<string, string>,
): Promise<ToolRun> => {
  const done = await new Deno.Command(program, {
    args: [...args],
    cwd,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(180_000),
  }).output();
  const stdout = new TextDecoder().decode(done.stdout);
  return {
    success: done.success,
    stdout,
    said: stdout + new TextDecoder().decode(done.stderr),
  };
};
