/**
 * The agent the turn-loop crash campaign kills:
 * `deno run -A turn_crash_child.ts ROOT ID KILL` creates session ID under
 * ROOT and runs {@link TURNS} turns with `runTurn`, a scripted model (tool
 * calls, long tool results) and a small compaction budget, so the turns
 * compact as they go. Every store write is counted; after each write
 * resolves it prints `ack N DIGEST` (N the next seq, DIGEST the sha-256 of
 * the log's lines so far).
 *
 * KILL says where the process kills itself with SIGKILL, so each durable
 * write of `runTurn` and of the compaction engine is a kill point:
 * `before:K` as write K (0-based) is about to start, `after:K` once it
 * resolved and was acknowledged, `summary:K` while the model writes
 * summary K (mid-summary: the `compaction/start` is durable, the end never
 * comes). `none` kills nothing and prints `writes W summaries S` at the
 * end, which is how the campaign enumerates its kill points.
 *
 * @module
 */
import { Effect, Layer, Result, Schema, Stream } from "effect";
import { LanguageModel, type Response, Tool, Toolkit } from "effect/ai";
import { createHash } from "node:crypto";
import { makeJsonlStore, Session, SessionStore } from "@palimpsest/session";
import { encodeEventLine } from "@palimpsest/session/jsonl";
import { type CompactionPolicy, runTurn } from "@palimpsest/session/ai";

/** Turns the agent runs. */
export const TURNS = 3;

/** The budget every run compacts under, the restart included. */
export const POLICY: CompactionPolicy = { maxTokens: 700, keepTokens: 250 };

/** The tool the scripted model calls. */
export const Read = Tool.make("read", {
  parameters: Schema.Struct({ path: Schema.String }),
  success: Schema.String,
});
/** The toolkit. */
export const tools = Toolkit.make(Read);
/** Its handler: a long result, so every turn goes over budget. */
export const handlers = tools.toLayer({
  read: ({ path }) => Effect.succeed(`line of ${path}\n`.repeat(120)),
});

const usage = { inputTokens: {}, outputTokens: {} };

/**
 * The scripted model: a request whose prompt ends in a tool result gets a
 * text answer; any other gets a call to `read`. A summary is short text.
 * `onSummary` runs first on each summary request (the campaign kills
 * there).
 */
export const scriptedModel = (
  onSummary: (n: number) => void = () => {},
): Layer.Layer<LanguageModel.LanguageModel> => {
  let requests = 0;
  let summaries = 0;
  return Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: () =>
        Effect.sync(() => {
          onSummary(summaries);
          return [{
            type: "text" as const,
            text: `Summary ${summaries++}: files were read.`,
          }];
        }),
      streamText: ({ prompt }) =>
        Stream.unwrap(Effect.sync(() => {
          const n = requests++;
          const answered = prompt.content.at(-1)?.role === "tool";
          const parts: Response.StreamPartEncoded[] = answered
            ? [
              { type: "text-delta", id: "t", delta: `Read it (${n}).` },
              { type: "finish", reason: "stop", usage },
            ]
            : [
              {
                type: "tool-call",
                id: `call-${Date.now()}-${n}`,
                name: "read",
                params: { path: `f${n}.txt` },
              },
              { type: "finish", reason: "tool-calls", usage },
            ];
          return Stream.fromIterable(parts);
        })),
    }),
  );
};

/** The sha-256 of a log's encoded lines: what was acknowledged. */
export const digest = (session: Session): string => {
  const hash = createHash("sha256");
  for (const event of Result.getOrThrow(Session.events(session))) {
    hash.update(encodeEventLine(event));
  }
  return hash.digest("hex");
};

/** The user's input of turn `n`: long enough to need compaction. */
export const inputOf = (n: number): string =>
  `Turn ${n}: read the next file. ${"Context. ".repeat(60)}`;

const kill = (): never => {
  Deno.kill(Deno.pid, "SIGKILL");
  throw new Error("unreachable: the process was killed");
};

if (import.meta.main) {
  const [root = ".", id = "turn-crash", spec = "none"] = Deno.args;
  const [where = "none", at = "-1"] = spec.split(":");
  const point = Number(at);
  let writes = 0;
  let summaries = 0;
  const counting = Layer.effect(
    SessionStore,
    Effect.map(makeJsonlStore({ root }), (store): SessionStore => {
      const gate = <A extends { readonly session: Session }, E, R>(
        write: Effect.Effect<A, E, R>,
      ) =>
        Effect.suspend(() => {
          const k = writes++;
          if (where === "before" && k === point) kill();
          return Effect.tap(write, (done) =>
            Effect.sync(() => {
              console.log(
                `ack ${Session.nextSeq(done.session)} ${digest(done.session)}`,
              );
              if (where === "after" && k === point) kill();
            }));
        });
      return {
        ...store,
        append: (handle, drafts) => gate(store.append(handle, drafts)),
        appendEvents: (handle, events) =>
          gate(store.appendEvents(handle, events)),
        update: (handle, op) => gate(store.update(handle, op)),
        repair: (handle) => gate(store.repair(handle)),
      };
    }),
  );
  const model = scriptedModel((n) => {
    summaries = n + 1;
    if (where === "summary" && n === point) kill();
  });
  const program = Effect.gen(function* () {
    const store = yield* SessionStore;
    const handle = yield* store.create({ id, createdAt: 0, isSeeded: false });
    const toolkit = yield* tools;
    for (let turn = 0; turn < TURNS; turn++) {
      yield* runTurn({
        handle,
        toolkit,
        model: { provider: "scripted", model: "m" },
        input: inputOf(turn),
        compaction: POLICY,
      });
    }
    yield* store.close(handle);
  });
  await Effect.runPromise(
    Effect.scoped(program).pipe(
      Effect.provide(Layer.mergeAll(counting, model, handlers)),
    ),
  );
  console.log(`writes ${writes} summaries ${summaries}`);
}
