/**
 * Records a real Gemini CLI session for the importer's fixtures: installs
 * the pinned CLI (`install.sh`), runs it offline with a private HOME
 * against a loopback server of this script's own that speaks the Gemini
 * API (`GOOGLE_GEMINI_BASE_URL`, a fake key, telemetry and update checks
 * off), and copies the session file it writes under
 * `HOME/.gemini/tmp/<project>/chats/` to
 * `tests/fixtures/import/gemini-cli/real.jsonl`.
 *
 * The session: a prompt, a thought and a `read_file` call, its result, an
 * answer; then a second prompt resumed (`--resume latest`) and answered.
 * A new pin is checked by bumping it in `package.json`, running
 * `npm install --package-lock-only` in writers/ and then this script:
 *
 *   deno run -A tools/peer_tools/record_gemini.ts
 *
 * and `deno test -A tests/import/fixtures_test.ts` (whose expected JSON
 * says what changed).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const here = path.dirname(new URL(import.meta.url).pathname);
const root = path.resolve(here, "../..");
const out = path.join(root, "tests/fixtures/import/gemini-cli/real.jsonl");

const rec = (u: unknown): Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)
    ? Object.fromEntries(Object.entries(u))
    : {};
const list = (u: unknown): unknown[] => Array.isArray(u) ? u : [];

/** The parts of a request's last content. */
const lastParts = (body: unknown): Record<string, unknown>[] =>
  list(rec(list(rec(body).contents).at(-1)).parts).map(rec);

const usage = {
  promptTokenCount: 12,
  candidatesTokenCount: 5,
  thoughtsTokenCount: 3,
  totalTokenCount: 20,
};

/** What the model answers: a call for a fresh prompt, a text after a result. */
const reply = (body: unknown): Record<string, unknown> => {
  const parts = lastParts(body);
  const text = parts.map((p) => typeof p.text === "string" ? p.text : "")
    .join("");
  const answered = parts.some((p) => "functionResponse" in p);
  const modelParts = answered
    ? [{ text: "notes.txt says: hello from the fixture." }]
    : text.includes("second")
    ? [{ text: "Second answer, after the resume." }]
    : [
      { text: "I should read the file first.", thought: true },
      {
        functionCall: {
          id: "call-read-1",
          name: "read_file",
          args: { file_path: "notes.txt" },
        },
      },
    ];
  return {
    candidates: [{
      content: { role: "model", parts: modelParts },
      finishReason: "STOP",
      index: 0,
    }],
    usageMetadata: usage,
    modelVersion: "gemini-2.5-flash",
  };
};

const seen: string[] = [];
const server = Deno.serve(
  { hostname: "127.0.0.1", port: 0, onListen: () => {} },
  async (req) => {
    const { pathname } = new URL(req.url);
    const raw = req.method === "POST" ? await req.text() : "";
    seen.push(`${req.method} ${pathname}`);
    const body: unknown = raw === "" ? {} : JSON.parse(raw);
    if (pathname.endsWith(":countTokens")) {
      return Response.json({ totalTokens: 12 });
    }
    if (pathname.endsWith(":streamGenerateContent")) {
      return new Response(`data: ${JSON.stringify(reply(body))}\r\n\r\n`, {
        headers: { "content-type": "text/event-stream" },
      });
    }
    if (pathname.endsWith(":generateContent")) {
      // The CLI's own side questions (next speaker, routing): a JSON text.
      return Response.json({
        candidates: [{
          content: {
            role: "model",
            parts: [{
              text: JSON.stringify({
                next_speaker: "user",
                reasoning: "done",
                model_choice: "flash",
              }),
            }],
          },
          finishReason: "STOP",
          index: 0,
        }],
        usageMetadata: usage,
      });
    }
    return new Response("", { status: 404 });
  },
);

const installed = new Deno.Command("bash", {
  args: [path.join(here, "install.sh"), "--writers"],
  stderr: "inherit",
}).outputSync();
if (!installed.success) throw new Error("install.sh failed");
const bin = new TextDecoder().decode(installed.stdout).trim().split("\n")
  .pop() ?? "";

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "record-gemini-"));
const home = path.join(scratch, "home");
const cwd = path.join(scratch, "work");
fs.mkdirSync(path.join(home, ".gemini"), { recursive: true });
fs.mkdirSync(cwd);
fs.writeFileSync(path.join(cwd, "notes.txt"), "hello from the fixture\n");
fs.writeFileSync(
  path.join(home, ".gemini", "settings.json"),
  JSON.stringify({
    general: { disableAutoUpdate: true, disableUpdateNag: true },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    security: { auth: { selectedType: "gemini-api-key" } },
  }),
);
const env = {
  HOME: home,
  GEMINI_API_KEY: "loopback-key",
  GOOGLE_GEMINI_BASE_URL: `http://127.0.0.1:${server.addr.port}`,
  GEMINI_CLI_NO_RELAUNCH: "true",
  GEMINI_CLI_TRUST_WORKSPACE: "true",
  NO_COLOR: "1",
};

// The server answers on this thread: the CLI runs asynchronously.
const run = async (args: string[]): Promise<void> => {
  const done = await new Deno.Command(path.join(bin, "gemini"), {
    args: [...args, "--model", "gemini-2.5-flash"],
    cwd,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(120_000),
  }).output();
  const said = new TextDecoder().decode(done.stdout) +
    new TextDecoder().decode(done.stderr);
  console.log(`$ gemini ${args.join(" ")}\n${said}`);
  if (!done.success) throw new Error(`gemini failed; requests: ${seen}`);
};

try {
  await run(["-p", "What does notes.txt say? Read it."]);
  await run(["-p", "A second question, resumed.", "--resume", "latest"]);
  const chats = [...fs.readdirSync(path.join(home, ".gemini"), {
    recursive: true,
  })].map(String).filter((f) => /chats\/[^/]+\.jsonl?$/.test(f));
  console.log(`requests: ${seen.join(", ")}\nsession files: ${chats}`);
  const [file] = chats;
  if (chats.length !== 1 || file === undefined) {
    throw new Error(`expected one session file, found ${chats.length}`);
  }
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.copyFileSync(path.join(home, ".gemini", file), out);
  console.log(`wrote ${path.relative(root, out)}`);
} finally {
  await server.shutdown();
  fs.rmSync(scratch, { recursive: true, force: true });
}
