/**
 * One turn of Claude Code driven by the Claude Agent SDK's `query`, with
 * the session mirrored into a JSONL store through `openClaudeSessionStore`
 * (`sessionStoreFlush: "eager"`, so each transcript line is appended as
 * Claude Code writes it). Run as a program:
 *
 * `deno run -A _query.ts <root> <claude> <baseURL> <cwd> <prompt> [<resume id>]`
 *
 * with `HOME` set to the home Claude Code is to use (the SDK mirrors only
 * the lines written under the configuration folder it sees itself). It
 * prints `session <id>` once Claude Code started, then `result <text>`.
 *
 * @module
 */
import { query } from "@anthropic-ai/claude-agent-sdk";
import { layerJsonlStore } from "@palimpsest/session";
import { openClaudeSessionStore } from "@palimpsest/session/claude-agent";

const [root = "", claude = "", baseURL = "", cwd = "", prompt = "", resume] =
  Deno.args;
const sessionStore = await openClaudeSessionStore(layerJsonlStore({ root }));
try {
  const turn = query({
    prompt,
    options: {
      sessionStore,
      sessionStoreFlush: "eager",
      pathToClaudeCodeExecutable: claude,
      cwd,
      model: "claude-sonnet-4-5",
      allowedTools: ["Read"],
      permissionMode: "acceptEdits",
      ...(resume === undefined ? {} : { resume }),
      env: {
        ...Deno.env.toObject(),
        ANTHROPIC_BASE_URL: baseURL,
        ANTHROPIC_API_KEY: "sk-loopback",
        DISABLE_TELEMETRY: "1",
        DISABLE_AUTOUPDATER: "1",
        DISABLE_ERROR_REPORTING: "1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        NO_COLOR: "1",
      },
      stderr: (data) => console.error(data),
    },
  });
  for await (const message of turn) {
    if (message.type === "system" && message.subtype === "init") {
      console.log(`session ${message.session_id}`);
    } else if (message.type === "result") {
      console.log(
        `result ${
          message.subtype === "success" ? message.result : message.subtype
        }`,
      );
    }
  }
} finally {
  await sessionStore.close();
}
