/**
 * An agent whose answers stream slowly, for the tests that read a partial
 * answer from another process (a follower connecting mid-answer, a kill
 * while it streams): `deno run -A partial_child.ts STORE ID` creates
 * session ID in STORE (a JSONL root folder, or a `postgres://` URL) and
 * runs one turn whose model sends {@link SCRIPT}'s answers one part every
 * {@link GAP_MS} ms, with partial batches every {@link INTERVAL_MS} ms. It
 * prints `created` once the session exists, `sent N` after the model's
 * N-th part, and `done` at the end.
 *
 * @module
 */
import { spawn } from "node:child_process";
import { Effect, Layer, Schema } from "effect";
import { type LanguageModel, type Response, Tool, Toolkit } from "effect/ai";
import { layerJsonlStore, SessionStore } from "@palimpsest/session";
import { layerPostgresStore } from "@palimpsest/session/postgres";
import { runTurn } from "@palimpsest/session/ai";
import { loopbackModel, streamedPart } from "./partial_stream.ts";

/** The wait between two parts the model sends. */
export const GAP_MS = 3;
/** The partial batches' interval. */
export const INTERVAL_MS = 10;

/** The `note` tool the model calls. */
export const Note = Tool.make("note", {
  parameters: Schema.Struct({ text: Schema.String }),
  success: Schema.String,
});
/** Its toolkit. */
export const tools = Toolkit.make(Note);
/** Its handler. */
export const handlers = tools.toLayer({ note: () => Effect.succeed("noted") });

const usage = { inputTokens: {}, outputTokens: {} };
const words = (n: number, word: string): string[] =>
  Array.from({ length: n }, (_, i) => `${word}${i} `);
const argument = JSON.stringify({ text: words(60, "a").join("") });

/**
 * The model's two answers: reasoning, text and a call whose arguments
 * stream; then, after the call's result, text.
 */
export const SCRIPT: ReadonlyArray<ReadonlyArray<Response.StreamPartEncoded>> =
  [
    [
      ...streamedPart("reasoning", "r", words(80, "think")),
      ...streamedPart("text", "t", words(80, "say")),
      ...streamedPart(
        "tool-params",
        "c1",
        Array.from(
          { length: Math.ceil(argument.length / 8) },
          (_, i) => argument.slice(i * 8, i * 8 + 8),
        ),
      ),
      {
        type: "tool-call",
        id: "c1",
        name: "note",
        params: JSON.parse(argument),
      },
      { type: "finish", reason: "tool-calls", usage },
    ],
    [
      ...streamedPart("text", "t", words(120, "done")),
      { type: "finish", reason: "stop", usage },
    ],
  ];

/**
 * The slow model: answer k of {@link SCRIPT} for request k; prints `sent N`
 * once it sent its N-th part (from 1), so a killer knows how far it got.
 */
export const slowModel = (): Layer.Layer<LanguageModel.LanguageModel> => {
  let sent = 0;
  return loopbackModel(SCRIPT, GAP_MS, () => console.log(`sent ${++sent}`));
};

/** The parts the model sends in the whole turn. */
export const PARTS_SENT: number = SCRIPT.reduce((n, a) => n + a.length, 0);

/** This program, started by {@link startAgent}. */
const self = new URL(import.meta.url).pathname;

/**
 * Starts this program in its own process on session `id` of `where`;
 * resolves once it has printed `ready` (`created`, `sent 20`), with its
 * exit code to come.
 */
export const startAgent = (
  where: string,
  id: string,
  ready: string,
): Promise<{ readonly done: Promise<number | null> }> =>
  new Promise((resolve, reject) => {
    const agent = spawn(Deno.execPath(), ["run", "-A", self, where, id], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    const done = new Promise<number | null>((end) =>
      agent.on("exit", (code) => end(code))
    );
    agent.on("error", reject);
    let out = "";
    agent.stdout.on("data", (data: Uint8Array) => {
      out += new TextDecoder().decode(data);
      if (out.includes(`${ready}\n`)) resolve({ done });
    });
  });

if (import.meta.main) {
  const [where = "", id = "s"] = Deno.args;
  const store = where.startsWith("postgres://")
    // A short lease: the tests kill this process and take its session.
    ? layerPostgresStore({ url: where, maxConnections: 2, lease: "1 second" })
    : layerJsonlStore({ root: where });
  await Effect.runPromise(
    Effect.gen(function* () {
      const sessions = yield* SessionStore;
      const handle = yield* sessions.create({
        id,
        createdAt: 0,
        isSeeded: false,
      });
      console.log("created");
      yield* runTurn({
        handle,
        toolkit: yield* tools,
        model: { provider: "slow", model: "m" },
        input: "Think, say, note.",
        partial: { interval: `${INTERVAL_MS} millis` },
      });
      console.log("done");
    }).pipe(
      Effect.scoped,
      Effect.provide(Layer.mergeAll(slowModel(), handlers, store)),
    ),
  );
}
