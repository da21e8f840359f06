/**
 * `deno task demo`: a scripted agent session with no network, written to a
 * real JSONL file through the session store.
 *
 * 1. A child process plays the agent: system prompt, a user turn, an
 *    assistant message with a tool call, a huge tool result, a second tool
 *    call, and then it dies (SIGKILL) in the middle of writing that call's
 *    result: a torn line, an open turn, a lock left behind.
 * 2. This process reopens the file for writing (the dead writer's lock is
 *    reclaimed, the torn line cut) and repairs the interrupted turn.
 * 3. The session goes on with a second turn, then the huge tool result is
 *    pruned and the oldest history compacted into a summary.
 *
 * It prints each step, the final surface, the derived messages, and the
 * file's path, so the CLI can be run on it:
 * `deno task cli verify <path>`, `stats`, `explain`, `derive`.
 *
 * @module
 */
import {
  checkTranscript,
  compact,
  deriveMessagesWithSources,
  type EventDraft,
  isSurfaceEvent,
  layerJsonlStore,
  type Message,
  pruneToolResult,
  selectCompactableRange,
  Session,
  type SessionHandle,
  SessionSeq,
  SessionStore,
  setSystemPrompt,
  surfaceEvent,
  surfaceNodes,
} from "@palimpsest/session";
import { encodeEventLine } from "@palimpsest/session/jsonl";
import { Effect } from "effect";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const SESSION_ID = "demo-session";
const say = (text: string): void => console.log(text);
const text = (t: string) => [{ type: "text" as const, text: t }];
const model = { kind: "model" as const, provider: "scripted", model: "demo-1" };

const user = (id: string, t: string): EventDraft => ({
  type: "user/message",
  surfaceOp: "append",
  data: { id, role: "user", content: text(t), source: { kind: "user" } },
});

const assistant = (
  turn: number,
  step: number,
  id: string,
  t: string,
  call?: { id: string; name: string; arguments: string },
): EventDraft => ({
  type: "assistant/message",
  surfaceOp: "append",
  data: {
    turn,
    step,
    stream: [],
    message: {
      id,
      role: "assistant",
      content: call === undefined
        ? text(t)
        : [...text(t), { type: "tool-call", ...call }],
      source: model,
    },
  },
});

const toolCall = (
  turn: number,
  step: number,
  call: { id: string; name: string; arguments: string },
): EventDraft => ({
  type: "tool/call",
  data: {
    turn,
    step,
    callId: call.id,
    name: call.name,
    arguments: call.arguments,
  },
});

const toolResult = (
  turn: number,
  step: number,
  callId: string,
  callSeq: SessionSeq,
  t: string,
): EventDraft => ({
  type: "tool/result",
  surfaceOp: "append",
  sourceEventSeqs: [callSeq],
  data: {
    turn,
    step,
    message: {
      id: `result-${callId}`,
      role: "user",
      source: { kind: "tool", callId },
      content: [{ type: "tool-result", toolCallId: callId, content: text(t) }],
    },
  },
});

const lastSeq = (handle: SessionHandle): SessionSeq =>
  SessionSeq.make(Session.nextSeq(handle.session) - 1);

/** Appends what a pure history operation added to the session, durably. */
const persist = (
  handle: SessionHandle,
  operation: (session: Session) => Effect.Effect<Session, unknown>,
) =>
  Effect.gen(function* () {
    const store = yield* SessionStore;
    const before = handle.session;
    const after = yield* operation(before);
    yield* store.appendEvents(
      handle,
      Session.events(after, Session.nextSeq(before)),
    );
    return after;
  });

const readFile = {
  id: "read-1",
  name: "read",
  arguments: '{"path":"notes.txt"}',
};
const testCall = { id: "test-1", name: "run_tests", arguments: "{}" };
const testAgain = { id: "test-2", name: "run_tests", arguments: "{}" };
const notes = Array.from(
  { length: 1500 },
  (_, i) => `line ${i + 1}: meeting notes, action items and decisions`,
).join("\n");

/** The child process: the agent's first turn, cut by a crash. */
const crashingAgent = () =>
  Effect.gen(function* () {
    const store = yield* SessionStore;
    const handle = yield* store.create({
      id: SESSION_ID,
      createdAt: Date.now(),
      isSeeded: false,
    });
    yield* store.append(handle, [
      { type: "turn/start", data: { turn: 0 } },
      { type: "step/start", data: { turn: 0, step: 0 } },
    ]);
    yield* persist(handle, (s) =>
      setSystemPrompt(s, "You are a careful coding agent."));
    yield* store.append(handle, [
      user("u0", "Summarize notes.txt, then run the tests."),
      assistant(0, 0, "a0", "Reading the notes first.", readFile),
      toolCall(0, 0, readFile),
    ]);
    yield* store.append(handle, [
      toolResult(0, 0, readFile.id, lastSeq(handle), notes),
      { type: "step/end", data: { turn: 0, step: 0 } },
      { type: "step/start", data: { turn: 0, step: 1 } },
      assistant(
        0,
        1,
        "a1",
        "The notes list 1500 lines of decisions. Now the tests.",
        testCall,
      ),
      toolCall(0, 1, testCall),
    ]);
    // The tool ran; the process dies half-way through writing its result.
    const line = encodeEventLine({
      type: "tool/result",
      seq: Session.nextSeq(handle.session),
      time: Date.now(),
      surfaceOp: "append",
      data: {
        turn: 0,
        step: 1,
        message: {
          id: "result-test-1",
          role: "user",
          source: { kind: "tool", callId: testCall.id },
          content: [{
            type: "tool-result",
            toolCallId: testCall.id,
            content: text("12 passed"),
          }],
        },
      },
    });
    fs.appendFileSync(handle.path, line.slice(0, 60));
    Deno.kill(Deno.pid, "SIGKILL");
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

/** This process: reopen, repair, go on, prune, compact. */
const recovery = (file: string) =>
  Effect.gen(function* () {
    const store = yield* SessionStore;
    say("\n2. Reopening the file for writing");
    let handle = yield* store.open(SESSION_ID, { mode: "write" });
    const torn = handle.report.tornTail;
    say(
      `   the dead writer's lock was reclaimed; ${
        Session.nextSeq(handle.session)
      } events read`,
    );
    if (torn !== undefined) {
      say(
        `   torn final line cut: ${torn.bytes} bytes at byte ${torn.offset} (the unfinished tool result)`,
      );
    }

    say("\n3. Repairing the interrupted turn");
    const repaired = yield* store.repair(handle);
    for (const e of repaired.closers) {
      const detail = isSurfaceEvent(e) && e.type === "tool/result"
        ? ` for ${e.data.message.source.callId}: ${e.data.error?.code ?? ""}`
        : "";
      say(`   appended seq ${e.seq} ${e.type}${detail}`);
    }

    say("\n4. The user retries: a second turn");
    yield* store.append(handle, [
      { type: "turn/start", data: { turn: 1 } },
      { type: "step/start", data: { turn: 1, step: 0 } },
      user("u1", "The session crashed. Please run the tests again."),
      assistant(1, 0, "a2", "Running them again.", testAgain),
      toolCall(1, 0, testAgain),
    ]);
    yield* store.append(handle, [
      toolResult(1, 0, testAgain.id, lastSeq(handle), "12 passed"),
      assistant(1, 0, "a3", "All 12 tests pass."),
      { type: "step/end", data: { turn: 1, step: 0 } },
      { type: "turn/end", data: { turn: 1, reason: { kind: "completed" } } },
    ]);
    say(
      `   log: ${
        Session.nextSeq(handle.session)
      } events, surface: ${handle.session.surface.length} nodes`,
    );

    say("\n5. Pruning the huge tool result");
    const huge = surfaceNodes(handle.session.surface).find((seq) => {
      const e = surfaceEvent(handle.session.surface, seq);
      return e?.type === "tool/result" && e.data.message.source.callId ===
          readFile.id;
    });
    if (huge !== undefined) {
      yield* persist(handle, (s) =>
        pruneToolResult(
          s,
          huge,
          text(
            `[notes.txt: ${notes.length} characters pruned; read it again if needed]`,
          ),
        ));
      say(
        `   seq ${huge} (${notes.length} characters) replaced by seq ${
          lastSeq(handle)
        }; the original stays in the log`,
      );
    }

    say("\n6. Compacting the oldest history");
    const range = selectCompactableRange(handle.session.surface, {
      keepLast: 4,
    });
    let summarySeq: SessionSeq | undefined;
    if (range !== undefined) {
      yield* persist(handle, (s) =>
        compact(s, {
          ...range,
          summary:
            "The user asked for a summary of notes.txt (1500 lines of decisions) and a test run; the first run was interrupted by a crash.",
          compactionId: "c1",
        }));
      summarySeq = SessionSeq.make(Session.nextSeq(handle.session) - 2);
      say(
        `   nodes ${range.startSeq}..${range.endSeq} replaced by the summary at seq ${summarySeq}`,
      );
    }
    yield* store.close(handle);

    // Read it back as any later process would.
    handle = yield* store.open(SESSION_ID);
    const surface = handle.session.surface;
    say("\n7. The final surface (seqs that produce the model's messages)");
    say(`   ${JSON.stringify(surfaceNodes(surface))}`);
    say(
      `   ${
        Session.nextSeq(handle.session)
      } events in the log, ${surface.replacements} replacements`,
    );
    say("\n8. The derived messages");
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
    say(`\nThe session log: ${file}`);
    say("Try the CLI on it:");
    say(`   deno task cli verify ${file}`);
    say(`   deno task cli stats ${file}`);
    say(`   deno task cli derive ${file}`);
    if (summarySeq !== undefined) {
      say(`   deno task cli explain ${file} ${summarySeq}`);
    }
  });

const childFlag = Deno.args.indexOf("--crash-child");
if (childFlag >= 0) {
  const root = Deno.args[childFlag + 1] ?? "";
  await Effect.runPromise(
    crashingAgent().pipe(Effect.provide(layerJsonlStore({ root }))),
  );
} else {
  // `--dir DIR` writes there (tests use it); by default a fresh temp folder.
  const dirFlag = Deno.args.indexOf("--dir");
  const root = dirFlag >= 0
    ? path.resolve(Deno.args[dirFlag + 1] ?? ".")
    : fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-demo-"));
  const file = path.join(root, `${SESSION_ID}.jsonl`);
  say("1. The agent runs in a child process and crashes mid tool call");
  const child = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", fileURLToPath(import.meta.url), "--crash-child", root],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  say(
    `   child exited with ${child.signal ?? child.code}; it left ${
      fs.statSync(file).size
    } bytes and a lock file: ${fs.existsSync(`${file}.lock`)}`,
  );
  await Effect.runPromise(
    recovery(file).pipe(Effect.provide(layerJsonlStore({ root }))),
  );
}
