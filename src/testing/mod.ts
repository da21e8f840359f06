/**
 * `@palimpsest/session/testing`: what a harness's tests need, in one place.
 *
 * - {@link scriptedModel}: an `effect/ai` `LanguageModel` whose answer is a
 *   function of the prompt it is sent. It serves `streamText` (the turn
 *   loop's requests) and `generateText` (the compaction engine's summary
 *   requests) from the same function, and keeps every request for
 *   assertions. Replies are typed so that literal parts compile as written,
 *   with or without `as const`.
 * - Part builders: {@link text}, {@link reasoning}, {@link toolCall},
 *   {@link finish}.
 * - Store layers: {@link layerMemoryStore} (re-exported) and
 *   {@link layerTempJsonlStore}, a JSONL store in a fresh temporary folder
 *   removed when the layer is released.
 * - Backend suites: {@link storeConformance} registers the store
 *   conformance tests for any `SessionStore` layer (with
 *   {@link runWriterProcess} and {@link spawnDenoWriter} for its writers in
 *   other processes), and {@link checkpointConformance} the checkpoint
 *   tests for a layer that keeps checkpoints; the memory, JSONL and
 *   PostgreSQL stores pass both. They register `Deno.test`s (or the tests
 *   of the `test` function given) and check with `node:assert/strict`.
 *
 * Nothing else in the package imports this module.
 *
 * @example A scripted model and a store for one turn
 * ```ts
 * import { runTurn } from "@palimpsest/session/ai";
 * import { SessionStore } from "@palimpsest/session";
 * import { finish, layerTempJsonlStore, scriptedModel, text, toolCall } from "@palimpsest/session/testing";
 * import { Effect, Layer, Schema } from "effect";
 * import { Tool, Toolkit } from "effect/ai";
 * import assert from "node:assert/strict";
 *
 * const Clock = Tool.make("clock", { success: Schema.String });
 * const tools = Toolkit.make(Clock);
 * const model = scriptedModel((prompt) =>
 *   prompt.content.at(-1)?.role === "tool"
 *     ? [...text("It is noon."), finish("stop")]
 *     : [toolCall("c1", "clock"), finish("tool-calls")]
 * );
 * const program = Effect.gen(function* () {
 *   const store = yield* SessionStore;
 *   const handle = yield* store.create({ id: "s", createdAt: 0, isSeeded: false });
 *   const toolkit = yield* tools;
 *   return yield* runTurn({ handle, toolkit, model: { provider: "scripted", model: "m" }, input: "Time?" });
 * });
 * const outcome = await Effect.runPromise(Effect.scoped(program).pipe(Effect.provide(Layer.mergeAll(
 *   model.layer, layerTempJsonlStore(), tools.toLayer({ clock: () => Effect.succeed("12:00") }),
 * ))));
 * assert.equal(outcome.steps, 2);
 * assert.equal(model.requests.length, 2);
 * ```
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Layer from "effect/Layer";
import * as Stream from "effect/Stream";
import type * as AiError from "effect/ai/AiError";
import * as LanguageModel from "effect/ai/LanguageModel";
import type * as Prompt from "effect/ai/Prompt";
import type * as Response from "effect/ai/Response";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { layerJsonlStore } from "../jsonl/store.ts";
import type { SessionStore } from "../store/store.ts";
import type { StorageError } from "../store/errors.ts";

export { layerMemoryStore, type MemoryStoreOptions } from "../store/memory.ts";
export {
  type RegisterTest,
  spawnDenoWriter,
  storeConformance,
  type StoreConformanceOptions,
  type WriterProcess,
  type WriterSignal,
} from "./store_conformance.ts";
export { runWriterProcess } from "./writer_process.ts";
export {
  checkpointConformance,
  type CheckpointConformanceOptions,
  type CheckpointStore,
} from "./checkpoint_conformance.ts";

/** One stream part as a script writes it: the encoded form. */
export type ScriptedPart = Response.StreamPartEncoded;

/**
 * What a script answers: a text (streamed as one text part and a `stop`
 * finish; the one text part of `generateText`), or the stream parts
 * themselves.
 */
export type ScriptedReply = string | ReadonlyArray<ScriptedPart>;

/** One request the scripted model was sent. */
export interface ScriptedRequest {
  /** `streamText` (a turn's request) or `generateText` (a summary). */
  readonly method: "streamText" | "generateText";
  /** Its position among all the requests, from 0. */
  readonly index: number;
  /** The prompt. */
  readonly prompt: Prompt.Prompt;
}

/**
 * The script: the reply to a prompt, or an effect giving it (fail it with
 * an `AiError` to make the request fail).
 */
export type Script = (
  prompt: Prompt.Prompt,
  request: ScriptedRequest,
) => ScriptedReply | Effect.Effect<ScriptedReply, AiError.AiError>;

/** A scripted model and what it was asked. */
export interface ScriptedModel {
  /** The `LanguageModel` layer. */
  readonly layer: Layer.Layer<LanguageModel.LanguageModel>;
  /** Every request, in order. */
  readonly requests: ReadonlyArray<ScriptedRequest>;
}

const NO_USAGE = { inputTokens: {}, outputTokens: {} };

/**
 * A text answer's stream parts: `text-start`, one `text-delta`, `text-end`.
 *
 * @param value The text.
 * @param id The part id; `"t"` by default.
 * @returns The three parts.
 *
 * @example
 * ```ts
 * import { text } from "@palimpsest/session/testing";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(text("Hi").map((p) => p.type), ["text-start", "text-delta", "text-end"]);
 * ```
 */
export function text(value: string, id: string = "t"): ScriptedPart[] {
  return [
    { type: "text-start", id },
    { type: "text-delta", id, delta: value },
    { type: "text-end", id },
  ];
}

/**
 * A reasoning block's stream parts: `reasoning-start`, one
 * `reasoning-delta`, `reasoning-end`.
 *
 * @param value The reasoning text.
 * @param id The part id; `"r"` by default.
 * @returns The three parts.
 *
 * @example
 * ```ts
 * import { reasoning } from "@palimpsest/session/testing";
 * import assert from "node:assert/strict";
 *
 * assert.equal(reasoning("Let me think").length, 3);
 * ```
 */
export function reasoning(value: string, id: string = "r"): ScriptedPart[] {
  return [
    { type: "reasoning-start", id },
    { type: "reasoning-delta", id, delta: value },
    { type: "reasoning-end", id },
  ];
}

/**
 * A tool call part.
 *
 * @param id The call id.
 * @param name The tool's name.
 * @param params The arguments; `{}` by default.
 * @returns The part.
 *
 * @example
 * ```ts
 * import { toolCall } from "@palimpsest/session/testing";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(toolCall("c1", "read", { path: "a" }), { type: "tool-call", id: "c1", name: "read", params: { path: "a" } });
 * ```
 */
export function toolCall(
  id: string,
  name: string,
  params: unknown = {},
): ScriptedPart {
  return { type: "tool-call", id, name, params };
}

/** Token counts a {@link finish} part reports. */
export interface ScriptedUsage {
  /** Input tokens. */
  readonly input?: number;
  /** Output tokens. */
  readonly output?: number;
  /** Input tokens read from the cache. */
  readonly cacheRead?: number;
  /** Output tokens spent reasoning. */
  readonly reasoning?: number;
}

/**
 * A finish part.
 *
 * @param reason Why the answer ended; `"stop"` by default.
 * @param usage The token counts to report; none by default.
 * @returns The part.
 *
 * @example
 * ```ts
 * import { finish } from "@palimpsest/session/testing";
 * import assert from "node:assert/strict";
 *
 * const part = finish("tool-calls", { input: 10, output: 2 });
 * assert.equal(part.type, "finish");
 * ```
 */
export function finish(
  reason: Response.FinishReason = "stop",
  usage?: ScriptedUsage,
): ScriptedPart {
  if (usage === undefined) return { type: "finish", reason, usage: NO_USAGE };
  return {
    type: "finish",
    reason,
    usage: {
      inputTokens: {
        ...(usage.input === undefined ? {} : { total: usage.input }),
        ...(usage.cacheRead === undefined
          ? {}
          : { cacheRead: usage.cacheRead }),
      },
      outputTokens: {
        ...(usage.output === undefined ? {} : { total: usage.output }),
        ...(usage.reasoning === undefined
          ? {}
          : { reasoning: usage.reasoning }),
      },
    },
  };
}

/** A reply as stream parts; a text ends with a `stop` finish. */
const streamPartsOf = (reply: ScriptedReply): ReadonlyArray<ScriptedPart> =>
  typeof reply === "string" ? [...text(reply), finish("stop")] : reply;

/**
 * A reply as the parts of a whole response: the deltas of each text and
 * reasoning block joined, tool calls and the finish as they are; the other
 * stream parts are left out.
 */
const responsePartsOf = (reply: ScriptedReply): Response.PartEncoded[] => {
  if (typeof reply === "string") return [{ type: "text", text: reply }];
  const out: Response.PartEncoded[] = [];
  const open = new Map<string, { kind: "text" | "reasoning"; text: string }>();
  const close = (id: string): void => {
    const block = open.get(id);
    if (block === undefined) return;
    open.delete(id);
    out.push(
      block.kind === "text"
        ? { type: "text", text: block.text }
        : { type: "reasoning", text: block.text },
    );
  };
  for (const part of reply) {
    switch (part.type) {
      case "text-start":
      case "reasoning-start":
        open.set(part.id, {
          kind: part.type === "text-start" ? "text" : "reasoning",
          text: "",
        });
        break;
      case "text-delta":
      case "reasoning-delta": {
        const block = open.get(part.id);
        if (block === undefined) {
          open.set(part.id, {
            kind: part.type === "text-delta" ? "text" : "reasoning",
            text: part.delta,
          });
        } else block.text += part.delta;
        break;
      }
      case "text-end":
      case "reasoning-end":
        close(part.id);
        break;
      case "tool-call":
      case "finish":
        for (const id of [...open.keys()]) close(id);
        out.push(part);
        break;
      default:
        break;
    }
  }
  for (const id of [...open.keys()]) close(id);
  return out;
};

/**
 * A `LanguageModel` that answers each request with `script(prompt,
 * request)`: `streamText` streams the reply's parts, `generateText`
 * returns them as one response (text deltas joined). Every request is kept
 * in `requests`, in order. As with any model, `effect/ai` decodes a tool
 * call part only for a tool of the request's toolkit.
 *
 * @param script The reply to each prompt.
 * @returns The layer and the requests it was sent.
 *
 * @example Answering by the prompt, for both methods
 * ```ts
 * import { scriptedModel } from "@palimpsest/session/testing";
 * import { Effect } from "effect";
 * import { LanguageModel } from "effect/ai";
 * import assert from "node:assert/strict";
 *
 * const model = scriptedModel((prompt) => `${prompt.content.length} message(s)`);
 * const response = await Effect.runPromise(
 *   LanguageModel.generateText({ prompt: "Hi" }).pipe(Effect.provide(model.layer)),
 * );
 * assert.equal(response.text, "1 message(s)");
 * assert.equal(model.requests[0]?.method, "generateText");
 * ```
 */
export function scriptedModel(script: Script): ScriptedModel {
  const requests: ScriptedRequest[] = [];
  const ask = (
    method: ScriptedRequest["method"],
    prompt: Prompt.Prompt,
  ): Effect.Effect<ScriptedReply, AiError.AiError> =>
    Effect.suspend(() => {
      const request: ScriptedRequest = {
        method,
        index: requests.length,
        prompt,
      };
      requests.push(request);
      const reply = script(prompt, request);
      return Effect.isEffect(reply) ? reply : Effect.succeed(reply);
    });
  const layer = Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: (options) =>
        Effect.map(ask("generateText", options.prompt), responsePartsOf),
      streamText: (options) =>
        Stream.unwrap(
          Effect.map(
            ask("streamText", options.prompt),
            (reply) => Stream.fromIterable(streamPartsOf(reply)),
          ),
        ),
    }),
  );
  return { layer, requests };
}

/**
 * A JSONL store in a fresh temporary folder, removed with everything in it
 * when the layer is released.
 *
 * @param prefix The folder name's prefix; `"palimpsest-test-"` by default.
 * @returns `Layer<SessionStore, StorageError>`.
 *
 * @example A store that leaves nothing behind
 * ```ts
 * import { layerTempJsonlStore } from "@palimpsest/session/testing";
 * import { SessionStore } from "@palimpsest/session";
 * import { Effect } from "effect";
 * import assert from "node:assert/strict";
 *
 * const program = Effect.gen(function* () {
 *   const store = yield* SessionStore;
 *   yield* Effect.scoped(store.create({ id: "s", createdAt: 0, isSeeded: false }));
 *   return (yield* store.list()).length;
 * });
 * assert.equal(await Effect.runPromise(program.pipe(Effect.provide(layerTempJsonlStore()))), 1);
 * ```
 */
export function layerTempJsonlStore(
  prefix: string = "palimpsest-test-",
): Layer.Layer<SessionStore, StorageError> {
  return Layer.unwrap(
    Effect.map(
      Effect.acquireRelease(
        Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), prefix))),
        (root) =>
          Effect.sync(() => fs.rmSync(root, { recursive: true, force: true })),
      ),
      (root) => layerJsonlStore({ root }),
    ),
  );
}
