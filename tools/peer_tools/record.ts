/**
 * Records real sessions of the pinned tools (`package.json` beside this
 * script: Claude Code, Codex, pi) for the importers' tests: each tool runs
 * offline against the tests' loopback model server, with a private home,
 * through a short scripted session, and the session files it wrote are
 * copied to `tests/fixtures/import/<tool>/real-*.jsonl`.
 *
 *     deno run -A --config deno.json tools/peer_tools/record.ts [claude-code|codex|pi ...]
 *     deno run -A --config deno.json tools/peer_tools/record.ts --expected [claude-code|codex|pi ...]
 *
 * (the second only rewrites the expectations of the files recorded before).
 *
 * Beside each file it writes the `.expected.json` that
 * `tests/import/fixtures_test.ts` checks, from the file's import as it is
 * now: the derived messages and the report's kinds of notes, skips and
 * unknown lines. A tool's new release is checked by bumping its pin and
 * running this script: the diff of the `.expected.json` files (ids and
 * times change with every recording) shows what the new writer changed for
 * the importer, above all a line type reported as not carried; review it
 * before committing. The sessions are offline, so the files hold nothing to
 * scrub beyond the scratch paths and the tools' own ids.
 *
 * The script, per tool (the model asks for one tool call reading `note.txt`,
 * then answers in text; a summary request gets a summary):
 *
 * - Claude Code: `claude -p "Read note.txt…" --session-id ID`, then
 *   `claude -p /compact --resume ID` (the `compact_boundary` with
 *   `compactMetadata.preservedSegment`), then one more turn.
 * - Codex: `codex exec "Read note.txt…"`, then `codex exec resume ID` with
 *   one more turn. Codex's `/compact` is an interactive command only; `exec`
 *   has no way to ask for it, so no compaction is recorded.
 * - pi: `pi -p "Read note.txt…"`, then `pi --fork FILE -p …`, whose header
 *   names the first file as its `parentSession` (pi 0.73 copies the parent's
 *   entries into the fork; the copy's `parentSession` names the parent's
 *   copy, `real-session.jsonl`, in the scratch folder it was written in).
 *
 * @module
 */
import { deriveMessagesWithSources } from "@palimpsest/session";
import { importSession } from "@palimpsest/session/import";
import { Effect } from "effect";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import {
  installTools,
  list,
  loopback,
  type PeerTool,
  rec,
  type Reply,
  runTool,
  type Sent,
  str,
  toolSetup,
} from "../../tests/_helpers/peer_tools.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const ASK = "Read note.txt and tell me what it says.";

/** The names of the tools a request offers, across the three APIs. */
const offered = (body: unknown): string[] =>
  list(rec(body).tools).map((t) =>
    str(rec(t).name) || str(rec(rec(t).function).name)
  );

/** The text of the last message of a request, across the three APIs. */
const lastText = (body: unknown): string => {
  const b = rec(body);
  const messages = [...list(b.messages), ...list(b.input)];
  const last = rec(messages[messages.length - 1]);
  const content = last.content;
  if (typeof content === "string") return content;
  return list(content).map((p) => str(rec(p).text)).join("\n");
};

/** Whether the last message of a request carries a tool's result. */
const endsWithResult = (body: unknown): boolean => {
  const b = rec(body);
  const messages = [...list(b.messages), ...list(b.input)];
  const last = rec(messages[messages.length - 1]);
  return last.role === "tool" ||
    str(last.type).endsWith("_call_output") ||
    list(last.content).some((p) => rec(p).type === "tool_result");
};

/** The call that reads `note.txt` with whichever reading tool is offered. */
const readCall = (names: ReadonlyArray<string>, cwd: string): Reply => {
  const call = (name: string, input: Record<string, unknown>): Reply => ({
    type: "call",
    id: `call_read_note`,
    name,
    input,
  });
  if (names.includes("Read")) {
    return call("Read", { file_path: path.join(cwd, "note.txt") });
  }
  if (names.includes("read")) return call("read", { path: "note.txt" });
  if (names.includes("exec_command")) {
    return call("exec_command", { cmd: "cat note.txt" });
  }
  if (names.includes("shell_command")) {
    return call("shell_command", { command: "cat note.txt" });
  }
  return call("shell", { command: ["cat", "note.txt"] });
};

/** The scripted model: one read, then texts; summaries when asked. */
const script = (cwd: string) => (sent: Sent): Reply => {
  const text = lastText(sent.body);
  // Claude Code asks for its summary between <summary> tags.
  if (text.includes("<summary>")) {
    return {
      type: "text",
      text: "<analysis>Short session.</analysis>\n<summary>" +
        "The user asked what note.txt says; it says hello.</summary>",
    };
  }
  if (endsWithResult(sent.body)) {
    return { type: "text", text: "The note says hello." };
  }
  const names = offered(sent.body);
  if (text.includes(ASK) && names.length > 0) return readCall(names, cwd);
  return { type: "text", text: "Noted." };
};

/** Every `.jsonl` file under `dir`, oldest first. */
const sessionFiles = (dir: string): string[] =>
  fs.existsSync(dir)
    ? fs.readdirSync(dir, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".jsonl"))
      .map((f) => path.join(dir, f))
      .sort((a, b) => fs.statSync(a).mtimeMs - fs.statSync(b).mtimeMs)
    : [];

interface Step {
  readonly args: ReadonlyArray<string>;
}

/** The steps of each tool's session; `files` are those it has written. */
const steps = (
  tool: PeerTool,
  files: () => string[],
): ReadonlyArray<() => Step> => {
  const id = crypto.randomUUID();
  const claude = ["--allowedTools", "Read", "--permission-mode", "acceptEdits"];
  switch (tool) {
    case "claude-code":
      return [
        () => ({ args: ["-p", ASK, "--session-id", id, ...claude] }),
        () => ({ args: ["-p", "/compact", "--resume", id, ...claude] }),
        () => ({ args: ["-p", "Thanks.", "--resume", id, ...claude] }),
      ];
    case "codex": {
      const exec = ["exec", "--skip-git-repo-check", "--sandbox", "read-only"];
      return [
        () => ({ args: [...exec, ASK] }),
        () => ({ args: [...exec, "resume", "--last", "Thanks."] }),
      ];
    }
    case "pi":
      return [
        () => ({ args: ["-p", ASK] }),
        () => ({ args: ["--fork", files()[0] ?? "", "-p", "Thanks."] }),
      ];
  }
};

/** Where each tool keeps its sessions under `home`. */
const sessionsDir = (tool: PeerTool, home: string): string =>
  tool === "claude-code"
    ? path.join(home, ".claude", "projects")
    : tool === "codex"
    ? path.join(home, ".codex", "sessions")
    : path.join(home, ".pi", "agent", "sessions");

/** Runs one tool's scripted session; the files it wrote, copied out. */
const record = async (
  bin: string,
  tool: PeerTool,
  scratch: string,
): Promise<string[]> => {
  const home = path.join(scratch, `home-${tool}`);
  const cwd = path.join(scratch, `work-${tool}`);
  fs.mkdirSync(home, { recursive: true });
  fs.mkdirSync(cwd, { recursive: true });
  fs.writeFileSync(path.join(cwd, "note.txt"), "hello\n");
  const { server, url } = loopback(script(cwd));
  try {
    const { program, args, env } = toolSetup(bin, tool, home, url);
    const files = () => sessionFiles(sessionsDir(tool, home));
    for (const step of steps(tool, files)) {
      const s = step();
      const done = await runTool(program, [...args, ...s.args], cwd, env);
      if (!done.success) throw new Error(`${tool} failed:\n${done.said}`);
      console.log(`${tool} ${s.args.join(" ")}: ok`);
    }
    const out = path.join(ROOT, "tests", "fixtures", "import", tool);
    const written = files();
    const named = written.map((_, n) =>
      `real-${n === 0 ? "session" : n === 1 ? "fork" : `${n}`}.jsonl`
    );
    return written.map((file, n) => {
      // A file that names another (pi's `parentSession`) names its copy:
      // the copies sit beside each other as the originals did.
      const text = written.reduce(
        (t, other, m) =>
          t.replaceAll(path.basename(other), named[m] ?? path.basename(other)),
        fs.readFileSync(file, "utf8"),
      );
      const to = path.join(out, named[n] ?? path.basename(file));
      fs.writeFileSync(to, text);
      return to;
    });
  } finally {
    await server.shutdown();
  }
};

/** Writes the `.expected.json` beside `file` from its import as it is now. */
const writeExpected = async (tool: PeerTool, file: string): Promise<void> => {
  const { session, report } = await Effect.runPromise(
    importSession(file, { from: tool }),
  );
  const expected = {
    messages: deriveMessagesWithSources(session.surface).map((m) => [
      m.seq,
      m.message.id,
      m.message.role,
    ]),
    report: {
      formatVersion: report.formatVersion,
      surface: report.surface,
      compactions: report.compactions,
      synthesized: report.synthesized.map((e) => [e.line, e.kind]),
      notCarried: report.notCarried.map((e) => [e.line, e.kind]),
      skipped: report.skipped.map((k) => [k.kind, k.lines]),
    },
  };
  fs.writeFileSync(
    file.replace(/\.jsonl$/, ".expected.json"),
    `${JSON.stringify(expected, null, 2)}\n`,
  );
};

if (import.meta.main) {
  const all: ReadonlyArray<PeerTool> = ["claude-code", "codex", "pi"];
  const named = all.filter((t) => Deno.args.includes(t));
  const chosen = named.length === 0 ? all : named;
  if (Deno.args.includes("--expected")) {
    // Only the expectations, from the recorded files as they are.
    for (const tool of chosen) {
      const dir = path.join(ROOT, "tests", "fixtures", "import", tool);
      for (const name of fs.readdirSync(dir).sort()) {
        if (!/^real-.*\.jsonl$/.test(name)) continue;
        await writeExpected(tool, path.join(dir, name));
        console.log(`wrote the expectations of ${tool}/${name}`);
      }
    }
  } else {
    const bin = await installTools();
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "peer-record-"));
    try {
      for (const tool of chosen) {
        for (const file of await record(bin, tool, scratch)) {
          await writeExpected(tool, file);
          console.log(
            `wrote ${path.relative(ROOT, file)} and its expectations`,
          );
        }
      }
    } finally {
      if (Deno.env.get("KEEP") === undefined) {
        fs.rmSync(scratch, { recursive: true, force: true });
      } else console.log(`kept ${scratch}`);
    }
  }
}
