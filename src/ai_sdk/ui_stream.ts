/**
 * A session's answer as the AI SDK's UI message stream, read from the log:
 * what `useChat` draws, live while the turn runs (its partial batches as
 * they are written) or after it ended, from any seq. The log is the
 * resumable stream: a client that reconnects asks again from the turn's
 * start and gets what already streamed, then the rest, with no store of
 * its own.
 *
 * {@link uiMessageChunks} is the stream, {@link uiStreamResponse} its
 * server-sent-events `Response` (for `Deno.serve`, or Node's `http` through
 * `Readable.fromWeb`).
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Stream from "effect/Stream";
import type { UIMessageChunk } from "ai";
import type { SessionEvent } from "../core/event.ts";
import { chunkField, chunkText } from "../session/partial.ts";
import {
  type FollowError,
  type FollowOptions,
  SessionStore,
} from "../store/store.ts";

const field = chunkField;
const str = chunkText;

/** A recorded `effect/ai` part as UI chunks (none for what the UI does not draw). */
const chunkOfPart = (part: unknown): ReadonlyArray<UIMessageChunk> => {
  const id = str(part, "id");
  const type = field(part, "type");
  switch (type) {
    case "text-delta":
    case "reasoning-delta":
      return [{ type, id, delta: str(part, "delta") }];
    case "text-start":
    case "text-end":
    case "reasoning-start":
    case "reasoning-end":
      return [{ type, id }];
    case "tool-params-start":
      return [{
        type: "tool-input-start",
        toolCallId: id,
        toolName: str(part, "name"),
      }];
    case "tool-params-delta":
      return [{
        type: "tool-input-delta",
        toolCallId: id,
        inputTextDelta: str(part, "delta"),
      }];
    case "tool-call":
      return field(part, "providerExecuted") === true ? [] : [{
        type: "tool-input-available",
        toolCallId: id,
        toolName: str(part, "name"),
        input: field(part, "params"),
      }];
    default:
      return [];
  }
};

const DELTAS: ReadonlySet<unknown> = new Set([
  "text-delta",
  "reasoning-delta",
  "tool-params-delta",
]);

/**
 * What the batches of the current request sent, as units: a part, or the
 * text of a run of deltas of one part. The settled answer's stream is
 * walked against them, so that only what no batch sent is sent again.
 */
interface Sent {
  readonly type: unknown;
  readonly id: string;
  text: string;
}

/** The parts of `stream` no unit of `sent` covers (a delta's rest included). */
const unsent = (
  stream: ReadonlyArray<unknown>,
  sent: ReadonlyArray<Sent>,
): unknown[] => {
  const out: unknown[] = [];
  let at = 0;
  let used = 0;
  for (const part of stream) {
    const unit = sent[at];
    const type = field(part, "type");
    const same = unit !== undefined && unit.type === type &&
      unit.id === str(part, "id");
    if (!same) {
      out.push(part);
      continue;
    }
    if (!DELTAS.has(type)) {
      at++;
      continue;
    }
    const delta = str(part, "delta");
    const left = unit.text.length - used;
    if (delta.length < left) {
      used += delta.length;
      continue;
    }
    // The batches sent this delta, or its start: send the rest.
    if (delta.length > left && typeof part === "object" && part !== null) {
      out.push({ ...part, delta: delta.slice(left) });
    }
    at++;
    used = 0;
  }
  return out;
};

/** The state of the conversion: the units sent for the current request. */
interface UiState {
  readonly sent: Sent[];
  readonly started: boolean;
}

const remember = (sent: Sent[], part: unknown): void => {
  const type = field(part, "type");
  const id = str(part, "id");
  const last = sent[sent.length - 1];
  if (
    DELTAS.has(type) && last !== undefined && last.type === type &&
    last.id === id
  ) {
    last.text += str(part, "delta");
  } else {
    sent.push({ type, id, text: DELTAS.has(type) ? str(part, "delta") : "" });
  }
};

/** One event as UI chunks, with the state after it. */
const chunksOfEvent = (
  state: UiState,
  event: SessionEvent,
): readonly [UiState, ReadonlyArray<UIMessageChunk>] => {
  const start: UIMessageChunk[] = state.started ? [] : [{ type: "start" }];
  const started = { sent: state.sent, started: true };
  switch (event.type) {
    case "step/start":
      return [{ sent: [], started: true }, [...start, { type: "start-step" }]];
    case "step/end":
      return [started, [...start, { type: "finish-step" }]];
    case "assistant/partial": {
      const sent = event.data.offset === 0 ? [] : state.sent;
      const parts = event.data.stream.map((r) => r.chunk);
      for (const part of parts) remember(sent, part);
      return [{ sent, started: true }, [
        ...start,
        ...parts.flatMap(chunkOfPart),
      ]];
    }
    case "assistant/message":
    case "assistant/attempt": {
      const rest = unsent(event.data.stream.map((r) => r.chunk), state.sent);
      return [{ sent: [], started: true }, [
        ...start,
        ...rest.flatMap(chunkOfPart),
      ]];
    }
    case "tool/result": {
      const block = event.data.message.content[0];
      const text = block.content.map((c) => c.type === "text" ? c.text : "")
        .join("");
      return [started, [
        ...start,
        block.isError === true
          ? {
            type: "tool-output-error",
            toolCallId: block.toolCallId,
            errorText: text,
          }
          : {
            type: "tool-output-available",
            toolCallId: block.toolCallId,
            output: text,
          },
      ]];
    }
    case "turn/end":
      return [started, [...start, { type: "finish" }]];
    default:
      return [state, []];
  }
};

/**
 * The answer of session `id` as UI message chunks, from `fromSeq` (the
 * `turn/start` of the turn to show, for a client that resumes) to the
 * turn's end, live: the partial batches as they are written, then what the
 * settled answer adds, the tool results, `finish`. A turn that already
 * ended is served whole at once.
 *
 * @param id The session id.
 * @param options Where to start (`fromSeq`), as `store.follow` takes it.
 * @returns `Stream<UIMessageChunk, FollowError, SessionStore>`.
 *
 * @example A finished turn as UI chunks
 * ```ts
 * import { Draft, SessionStore } from "@palimpsest/session";
 * import { uiMessageChunks } from "@palimpsest/session/ai-sdk";
 * import { layerTempJsonlStore } from "@palimpsest/session/testing";
 * import { Effect, Stream } from "effect";
 * import assert from "node:assert/strict";
 *
 * const program = Effect.gen(function* () {
 *   const store = yield* SessionStore;
 *   const handle = yield* store.create({ id: "s", createdAt: 0, isSeeded: false });
 *   yield* store.append(handle, [
 *     Draft.turnStart(0),
 *     Draft.user("Hi"),
 *     Draft.stepStart(0, 0),
 *     { type: "assistant/partial", ignorable: true, data: { turn: 0, step: 0, offset: 0, stream: [
 *       { time: 1, chunk: { type: "text-start", id: "t" } },
 *       { time: 1, chunk: { type: "text-delta", id: "t", delta: "Hel" } },
 *     ] } },
 *     Draft.assistant({ id: "a", turn: 0, step: 0, provider: "p", model: "m", content: "Hello", stream: [
 *       { time: 1, chunk: { type: "text-start", id: "t" } },
 *       { time: 1, chunk: { type: "text-delta", id: "t", delta: "Hello" } },
 *       { time: 2, chunk: { type: "text-end", id: "t" } },
 *     ] }),
 *     Draft.stepEnd(0, 0),
 *     Draft.turnEnd(0, "completed"),
 *   ]);
 *   return yield* Stream.runCollect(uiMessageChunks("s"));
 * });
 * const chunks = await Effect.runPromise(
 *   Effect.scoped(program).pipe(Effect.provide(layerTempJsonlStore())),
 * );
 * assert.deepEqual(chunks.flatMap((c) => c.type === "text-delta" ? [c.delta] : []), ["Hel", "lo"]);
 * assert.equal(chunks.at(-1)?.type, "finish");
 * ```
 */
export function uiMessageChunks(
  id: string,
  options?: Pick<FollowOptions, "fromSeq" | "waitForSession">,
): Stream.Stream<UIMessageChunk, FollowError, SessionStore> {
  return Stream.unwrap(Effect.gen(function* () {
    const store = yield* SessionStore;
    return store.follow(id, options).pipe(
      Stream.takeUntil((event) => event.type === "turn/end"),
      Stream.mapAccum(
        (): UiState => ({ sent: [], started: false }),
        chunksOfEvent,
      ),
    );
  }));
}

const encoder = new TextEncoder();

/**
 * A UI message stream as the server-sent-events `Response` the AI SDK's
 * client transport reads (`x-vercel-ai-ui-message-stream: v1`), ending with
 * `[DONE]`. Return it from a `Deno.serve` handler; on Node's `http`, pipe
 * `Readable.fromWeb(response.body)` into the response after its headers.
 *
 * @param chunks The chunks, their services provided.
 * @returns The response.
 *
 * @example The response's events
 * ```ts
 * import { uiStreamResponse } from "@palimpsest/session/ai-sdk";
 * import { Stream } from "effect";
 * import assert from "node:assert/strict";
 *
 * const response = uiStreamResponse(Stream.make({ type: "start" }, { type: "finish" }));
 * assert.equal(response.headers.get("x-vercel-ai-ui-message-stream"), "v1");
 * assert.equal(
 *   await response.text(),
 *   'data: {"type":"start"}\n\ndata: {"type":"finish"}\n\ndata: [DONE]\n\n',
 * );
 * ```
 */
export function uiStreamResponse<E>(
  chunks: Stream.Stream<UIMessageChunk, E>,
): Response {
  const lines = chunks.pipe(
    Stream.map((chunk) => encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`)),
    Stream.concat(Stream.make(encoder.encode("data: [DONE]\n\n"))),
  );
  return new Response(Stream.toReadableStream(lines), {
    headers: {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      "x-vercel-ai-ui-message-stream": "v1",
    },
  });
}
