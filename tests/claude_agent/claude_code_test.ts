/**
 * Claude Code itself, driven by the Claude Agent SDK with this store as its
 * `sessionStore`, offline against a loopback Anthropic server: a turn is
 * killed (SIGKILL) while its second model request is under way, after the
 * mirror stored the prompt, the tool call and its result; the session then
 * resumes from the store alone, in a fresh home, through another store
 * handle in another process, and Claude Code's next request carries the
 * killed turn. Claude Code is the version `tools/peer_tools/` pins.
 */
import {
  deriveMessages,
  layerJsonlStore,
  SessionStore,
} from "@palimpsest/session";
import { Effect } from "effect";
import assert from "node:assert/strict";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { lastMessageText, serveAnthropic } from "./_anthropic_server.ts";
import { installTools } from "../_helpers/peer_tools.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const QUERY = fileURLToPath(new URL("./_query.ts", import.meta.url));

/** A stream of text split into lines. */
const lineSplitter = (): TransformStream<string, string> => {
  let rest = "";
  return new TransformStream({
    transform(chunk, controller) {
      const parts = (rest + chunk).split("\n");
      rest = parts.pop() ?? "";
      for (const part of parts) controller.enqueue(part);
    },
    flush(controller) {
      if (rest !== "") controller.enqueue(rest);
    },
  });
};

/** The pids of the processes whose parent is `pid`. */
const childrenOf = async (pid: number): Promise<number[]> => {
  const out = await new Deno.Command("ps", {
    args: ["-o", "pid=", "--ppid", String(pid)],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).split("\n")
    .map((l) => Number(l.trim())).filter((n) => n > 0);
};

/** What the store's one mirrored session derives, as role and text. */
const derived = (root: string) =>
  Effect.runPromise(
    Effect.scoped(Effect.gen(function* () {
      const store = yield* SessionStore;
      const ids = yield* store.list();
      const out: string[] = [];
      for (const id of ids) {
        const handle = yield* store.open(id);
        for (const m of deriveMessages(handle.session.surface)) {
          out.push(`${m.role}: ${JSON.stringify(m.content)}`);
        }
      }
      return { ids, messages: out.join("\n") };
    })).pipe(Effect.provide(layerJsonlStore({ root }))),
  );

Deno.test("claude-agent: Claude Code killed mid-turn resumes from the store in a fresh home", async () => {
  const bin = await installTools();
  const claude = path.join(bin, "claude");
  const scratch = Deno.makeTempDirSync({ prefix: "claude-agent-e2e-" });
  const root = path.join(scratch, "store");
  const cwd = path.join(scratch, "work");
  Deno.mkdirSync(root);
  Deno.mkdirSync(cwd);
  Deno.writeTextFileSync(path.join(cwd, "notes.txt"), "buy milk\n");
  let resumed = false;
  const server = serveAnthropic((body) => {
    const last = lastMessageText(body);
    if (String(body["model"]).includes("haiku")) return { text: "A title" };
    if (last.includes("Go on.") || last.includes("tool_result")) {
      return resumed ? { text: "Resumed." } : "hang";
    }
    return {
      call: {
        id: "toolu_1",
        name: "Read",
        args: JSON.stringify({ file_path: path.join(cwd, "notes.txt") }),
      },
    };
  });
  const run = (home: string, prompt: string, ...resume: string[]) => {
    Deno.mkdirSync(home);
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "-A",
        `--config=${ROOT}deno.json`,
        QUERY,
        root,
        claude,
        server.url,
        cwd,
        prompt,
        ...resume,
      ],
      // A fresh home; the Deno cache of this process, not one under it.
      env: {
        HOME: home,
        DENO_DIR: Deno.env.get("DENO_DIR") ??
          path.join(Deno.env.get("HOME") ?? "", ".cache/deno"),
      },
      stdout: "piped",
      stderr: "inherit",
    }).spawn();
    const lines = child.stdout.pipeThrough(new TextDecoderStream())
      .pipeThrough(lineSplitter()).getReader();
    return {
      child,
      line: async (): Promise<string | undefined> => (await lines.read()).value,
    };
  };
  try {
    const first = run(path.join(scratch, "home-1"), "Read notes.txt");
    const started = await first.line();
    assert.match(started ?? "", /^session /);
    const id = (started ?? "").slice("session ".length);
    await server.held;
    // The tool result was mirrored before the request that hangs: wait for
    // it to be derived, then kill Claude Code and its driver.
    for (let i = 0; i < 100; i++) {
      if ((await derived(root)).messages.includes("tool-result")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // Claude Code first (the driver's child), then the driver.
    for (const pid of await childrenOf(first.child.pid)) {
      Deno.kill(pid, "SIGKILL");
    }
    first.child.kill("SIGKILL");
    assert.equal((await first.child.status).signal, "SIGKILL");
    const killed = await derived(root);
    assert.match(killed.messages, /Read notes\.txt/);
    assert.match(killed.messages, /"tool-call","id":"toolu_1"/);
    assert.match(killed.messages, /buy milk/);

    resumed = true;
    const seen = server.requests.length;
    const second = run(path.join(scratch, "home-2"), "Go on.", id);
    const lines: string[] = [];
    for (
      let line = await second.line();
      line !== undefined;
      line = await second.line()
    ) {
      lines.push(line);
    }
    assert.equal((await second.child.status).code, 0, lines.join("\n"));
    assert.ok(lines.includes("result Resumed."), lines.join("\n"));
    const request = server.requests.slice(seen).find((b) =>
      !String(b["model"]).includes("haiku")
    );
    const sent = JSON.stringify(request?.["messages"]);
    assert.match(sent, /Read notes\.txt/);
    assert.match(sent, /"tool_use","id":"toolu_1"|"id":"toolu_1"/);
    assert.match(sent, /"tool_use_id":"toolu_1"/);
    assert.match(sent, /Go on\./);
    assert.match((await derived(root)).messages, /Resumed\./);
  } finally {
    await server.close();
  }
});
