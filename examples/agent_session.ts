/**
 * `deno task demo`: an agent on the session log, with a scripted,
 * deterministic model (no network) and real tools in a temporary folder.
 *
 * 1. A child process runs the agent (`runTurn`): the model reads
 *    `notes.txt` with the `read_file` tool, then asks for the tests with the
 *    `run` tool, and the process is killed (SIGKILL) while that tool runs:
 *    the `tool/call` is durable, its result never comes, the turn is open,
 *    the writer's claim file (`<file>.lock.<uuid>`) is left behind.
 * 2. This process reopens the session for writing (the dead writer's claim
 *    is proven dead and removed) and calls `runTurn`, nothing else: it closes the
 *    interrupted turn first, as `store.repair` would.
 * 3. That turn runs with a small token budget: the compaction engine
 *    replaces the oldest history (the huge file read) with the model's
 *    summary before the request, then the model runs the tests for real.
 * 4. The final request is printed in Anthropic and OpenAI shape.
 *
 * With `ANTHROPIC_API_KEY` or `OPENAI_API_KEY` set (and, optionally,
 * `PALIMPSEST_DEMO_MODEL`), the same program runs on that provider through
 * `@palimpsest/session/ai-sdk` instead of the scripted model; what the model
 * does in each step is then its own choice.
 *
 * It prints each step and the file's path, so the CLI can be run on it:
 * `deno task cli verify <path>`, `stats`, `explain`, `derive`.
 *
 * @module
 */
import {
  checkTranscript,
  deriveMessages,
  deriveMessagesWithSources,
  isSurfaceEvent,
  layerJsonlStore,
  type Message,
  Session,
  type SessionHandle,
  SessionSeq,
  SessionStore,
  setSystemPrompt,
} from "@palimpsest/session";
import { surfaceNodes } from "@palimpsest/session/internal";
import { type CompactionPolicy, runTurn } from "@palimpsest/session/ai";
import { toAnthropic, toOpenAIChat } from "@palimpsest/session/providers";
import { layerAiSdkModel } from "@palimpsest/session/ai-sdk";
import {
  finish,
  scriptedModel,
  type ScriptedReply,
  text,
  toolCall,
} from "@palimpsest/session/testing";
import { Effect, Layer, Result, Schema } from "effect";
import { type LanguageModel, type Prompt, Tool, Toolkit } from "effect/ai";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const SESSION_ID = "demo-session";
const say = (text: string): void => console.log(text);

// ---------------------------------------------------------------------------
// The workspace and the tools (real: they read files and run commands)

const ReadFile = Tool.make("read_file", {
  description: "Read a file of the workspace",
  parameters: Schema.Struct({ path: Schema.String }),
  success: Schema.String,
  failure: Schema.String,
});
const Run = Tool.make("run", {
  description: "Run a command in the workspace",
  parameters: Schema.Struct({ command: Schema.Array(Schema.String) }),
  success: Schema.String,
  failure: Schema.String,
});
const tools = Toolkit.make(ReadFile, Run);

const makeWorkspace = (dir: string): void => {
  fs.mkdirSync(dir, { recursive: true });
  const notes = Array.from(
    { length: 1500 },
    (_, i) => `line ${i + 1}: meeting notes, action items and decisions`,
  ).join("\n");
  fs.writeFileSync(path.join(dir, "notes.txt"), notes);
  fs.writeFileSync(
    path.join(dir, "run_tests.sh"),
    'echo "running 12 tests"\necho "12 passed, 0 failed"\n',
  );
};

/** The tools' handlers; `crashInRun` kills this process inside `run`. */
const handlers = (workspace: string, crashInRun: boolean) =>
  tools.toLayer({
    read_file: ({ path: file }) =>
      Effect.try({
        try: () => fs.readFileSync(path.join(workspace, file), "utf8"),
        catch: (cause) => `cannot read ${file}: ${String(cause)}`,
      }),
    run: ({ command }) =>
      Effect.tryPromise({
        try: async () => {
          if (crashInRun) Deno.kill(Deno.pid, "SIGKILL");
          const [program = "true", ...args] = command;
          const out = await new Deno.Command(program, {
            args,
            cwd: workspace,
            stdout: "piped",
            stderr: "piped",
          }).output();
          return new TextDecoder().decode(out.stdout).trim();
        },
        catch: (cause) => `cannot run ${command.join(" ")}: ${String(cause)}`,
      }),
  });

// ---------------------------------------------------------------------------
// The scripted model: its answer is a function of the prompt it is sent

const lastOf = (prompt: Prompt.Prompt) => prompt.content.at(-1);

const answerTo = (prompt: Prompt.Prompt): ScriptedReply => {
  const last = lastOf(prompt);
  const asks = prompt.content.filter((m) => m.role === "user").length;
  const id = `call-${asks}-${prompt.content.length}`;
  if (last?.role === "tool") {
    const result = last.content.at(-1);
    if (result?.type === "tool-result" && result.name === "read_file") {
      return [
        ...text("The notes hold 1500 lines of decisions. Now the tests."),
        toolCall(id, "run", { command: ["sh", "run_tests.sh"] }),
        finish("tool-calls"),
      ];
    }
    return [...text("All 12 tests pass."), finish("stop")];
  }
  const asked = last?.role === "user"
    ? last.content.map((p) => p.type === "text" ? p.text : "").join("")
    : "";
  if (asked.includes("notes.txt")) {
    return [
      ...text("Reading the notes first."),
      toolCall(id, "read_file", { path: "notes.txt" }),
      finish("tool-calls"),
    ];
  }
  return [
    ...text("Running them again."),
    toolCall(id, "run", { command: ["sh", "run_tests.sh"] }),
    finish("tool-calls"),
  ];
};

// Turns call streamText; the compaction engine's summary calls generateText.
const model = scriptedModel((prompt, request) =>
  request.method === "generateText"
    ? "Summary: the user asked for a summary of notes.txt (1500 lines of meeting decisions) and a test run; the first run was cut by a crash."
    : answerTo(prompt)
);

/**
 * The scripted model by default; a real provider, through the AI SDK, when
 * its key is set. The provider packages are loaded only then.
 */
const chooseModel = async (): Promise<{
  readonly layer: Layer.Layer<LanguageModel.LanguageModel>;
  readonly name: { readonly provider: string; readonly model: string };
}> => {
  const chosen = Deno.env.get("PALIMPSEST_DEMO_MODEL") || undefined;
  const settings = { settings: { maxOutputTokens: 2048 } };
  const anthropicKey = Deno.env.get("ANTHROPIC_API_KEY") ?? "";
  if (anthropicKey !== "") {
    const { createAnthropic } = await import("@ai-sdk/anthropic");
    const model = createAnthropic({ apiKey: anthropicKey })(
      chosen ?? "claude-sonnet-4-5",
    );
    return {
      layer: layerAiSdkModel(model, settings),
      name: { provider: "anthropic", model: model.modelId },
    };
  }
  const openaiKey = Deno.env.get("OPENAI_API_KEY") ?? "";
  if (openaiKey !== "") {
    const { createOpenAI } = await import("@ai-sdk/openai");
    const model = createOpenAI({ apiKey: openaiKey }).responses(
      chosen ?? "gpt-5",
    );
    return {
      layer: layerAiSdkModel(model, settings),
      name: { provider: "openai", model: model.modelId },
    };
  }
  return {
    layer: model.layer,
    name: { provider: "scripted", model: "demo-1" },
  };
};

const { layer: modelLayer, name: MODEL } = await chooseModel();

// ---------------------------------------------------------------------------
// The two processes

const turnOf = (
  handle: SessionHandle,
  workspace: string,
  input: string,
  options: { crashInRun: boolean; compaction?: CompactionPolicy },
) =>
  Effect.gen(function* () {
    const toolkit = yield* tools;
    return yield* runTurn({
      handle,
      toolkit,
      model: MODEL,
      input,
      ...(options.compaction === undefined
        ? {}
        : { compaction: options.compaction }),
    });
  }).pipe(
    Effect.provide(
      Layer.merge(modelLayer, handlers(workspace, options.crashInRun)),
    ),
  );

/** The child process: the agent's first turn, cut by a crash. */
const crashingAgent = (workspace: string) =>
  Effect.gen(function* () {
    const store = yield* SessionStore;
    const handle = yield* store.create({
      id: SESSION_ID,
      createdAt: 0,
      isSeeded: false,
    });
    yield* store.update(
      handle,
      (s) => setSystemPrompt(s, "You are a careful coding agent."),
    );
    yield* turnOf(
      handle,
      workspace,
      "Summarize notes.txt, then run the tests.",
      { crashInRun: true },
    );
  });

const show = (message: Message): string => {
  const body = message.content.map((block) => {
    switch (block.type) {
      case "text":
        return block.text;
      case "tool-call":
        return `call ${block.name}(${block.arguments})`;
      case "tool-result":
        return `result of ${block.toolCallId}${
          block.isError === true ? " (error)" : ""
        }: ${
          block.content.map((c) => c.type === "text" ? c.text : c.type).join(
            " ",
          )
        }`;
      default:
        return `(${block.type})`;
    }
  }).join(" | ").replaceAll("\n", " ");
  return body.length > 90
    ? `${body.slice(0, 90)}… (${body.length} chars)`
    : body;
};

const clip = (value: unknown): unknown =>
  JSON.parse(
    JSON.stringify(
      value,
      (_key, v) =>
        typeof v === "string" && v.length > 60
          ? `${v.slice(0, 60)}… (${v.length} chars)`
          : v,
    ),
  );

/**
 * This process: reopen, run the next turn under a small budget (it closes
 * the interrupted turn first).
 */
/**
 * The writer claim files of a session file: `<file>.lock.<uuid>`, each
 * naming its writer's pid, start time and token (and the single
 * `<file>.lock` of 0.2). A killed writer leaves its claim; the next writer
 * proves its owner dead and removes it.
 */
const claimFiles = (file: string): ReadonlyArray<string> => {
  const base = path.basename(file);
  return fs.readdirSync(path.dirname(file)).filter((name) =>
    name === `${base}.lock` || name.startsWith(`${base}.lock.`)
  );
};

const recovery = (
  file: string,
  workspace: string,
  dead: ReadonlyArray<string>,
) =>
  Effect.gen(function* () {
    const store = yield* SessionStore;
    say("\n2. Reopening the session for writing");
    const handle = yield* store.open(SESSION_ID, { mode: "write" });
    const last = Session.eventAt(
      handle.session,
      Session.nextSeq(handle.session) - 1,
    );
    const now = claimFiles(file);
    const left = dead.filter((name) => now.includes(name));
    say(
      `   the dead writer's claim ${
        left.length === 0 ? "was proven dead and removed" : "is still there"
      }; claim files now: ${now.length} (this writer's); ${
        Session.nextSeq(handle.session)
      } events read, the last one a ${
        Result.isSuccess(last) ? last.success?.type : "(not held)"
      }`,
    );

    say(
      "\n3. The next turn, under a budget of 2000 tokens: runTurn first closes the turn the crash left open",
    );
    const before = Session.nextSeq(handle.session);
    const outcome = yield* turnOf(
      handle,
      workspace,
      "The session crashed. Please run the tests again.",
      { crashInRun: false, compaction: { maxTokens: 2000, keepTokens: 200 } },
    );
    for (const e of outcome.recovered) {
      const detail = isSurfaceEvent(e) && e.type === "tool/result"
        ? ` for ${e.data.message.source.callId}: ${e.data.error?.code ?? ""}`
        : "";
      say(`   closed first: seq ${e.seq} ${e.type}${detail}`);
    }

    say("\n4. What the turn appended");
    const events = Result.getOrThrow(Session.events(outcome.session));
    for (
      const e of Result.getOrThrow(Session.events(
        outcome.session,
        SessionSeq.make(before + outcome.recovered.length),
      ))
    ) {
      const shadowed = e.type === "compaction/summary" &&
          typeof e.data === "object" && e.data !== null &&
          "shadowedSeqs" in e.data
        ? ` (standing for seqs ${JSON.stringify(e.data.shadowedSeqs)})`
        : "";
      say(`   seq ${e.seq} ${e.type}${shadowed}`);
    }
    say(
      `   turn ${outcome.turn}: ${outcome.steps} steps, ended ${outcome.reason}; log: ${events.length} events, surface: ${outcome.session.surface.length} nodes, ${outcome.session.surface.replacements} replacement(s)`,
    );
    yield* store.close(handle);

    // Read it back as any later process would.
    const reader = yield* store.open(SESSION_ID);
    const surface = reader.session.surface;
    say("\n5. The final surface (seqs that produce the model's messages)");
    say(`   ${JSON.stringify(surfaceNodes(surface))}`);
    say("\n6. The derived messages");
    const derived = deriveMessagesWithSources(surface);
    for (const { seq, message } of derived) {
      say(`   [${String(seq).padStart(2)}] ${message.role}: ${show(message)}`);
    }
    const violations = checkTranscript(derived.map((d) => d.message));
    say(
      `\n   transcript check: ${
        violations.length === 0
          ? "clean"
          : violations.map((v) => v._tag).join(", ")
      }`,
    );
    const messages = deriveMessages(surface);
    say("\n7. The final request in Anthropic shape (long strings clipped)");
    say(JSON.stringify(clip(toAnthropic(messages)), null, 1));
    say("\n8. The final request in OpenAI Chat Completions shape");
    say(JSON.stringify(clip(toOpenAIChat(messages)), null, 1));
    say(`\nThe session log: ${file}`);
    say("Try the CLI on it:");
    say(`   deno task cli verify ${file}`);
    say(`   deno task cli stats ${file}`);
    say(`   deno task cli derive ${file}`);
  });

const childFlag = Deno.args.indexOf("--crash-child");
if (childFlag >= 0) {
  const root = Deno.args[childFlag + 1] ?? "";
  await Effect.runPromise(
    Effect.scoped(crashingAgent(path.join(root, "workspace"))).pipe(
      Effect.provide(layerJsonlStore({ root })),
    ),
  );
} else {
  // `--dir DIR` writes there (tests use it); by default a fresh temp folder.
  const dirFlag = Deno.args.indexOf("--dir");
  const root = dirFlag >= 0
    ? path.resolve(Deno.args[dirFlag + 1] ?? ".")
    : fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-demo-"));
  const workspace = path.join(root, "workspace");
  makeWorkspace(workspace);
  const file = path.join(root, `${SESSION_ID}.jsonl`);
  say(
    `Model: ${MODEL.provider} ${MODEL.model}${
      MODEL.provider === "scripted"
        ? " (set ANTHROPIC_API_KEY or OPENAI_API_KEY to run on a provider)"
        : ""
    }\n`,
  );
  say("1. The agent runs in a child process and is killed mid tool call");
  const child = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", fileURLToPath(import.meta.url), "--crash-child", root],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  const claims = claimFiles(file);
  say(
    `   child exited with ${child.signal ?? child.code}; it left ${
      fs.statSync(file).size
    } bytes and ${claims.length} writer claim file${
      claims.length === 1 ? "" : "s"
    }${claims.length === 0 ? "" : ` (${claims.join(", ")})`}`,
  );
  await Effect.runPromise(
    Effect.scoped(recovery(file, workspace, claims)).pipe(
      Effect.provide(layerJsonlStore({ root })),
    ),
  );
}
