/**
 * What a stream of `effect/ai` parts says, for comparing a partial answer's
 * batches with the stream they came from: consecutive deltas of one part
 * (text, reasoning, tool arguments) joined into one, times dropped.
 *
 * @module
 */
import type { AssistantPartialEvent, SessionEvent } from "@palimpsest/session";
import { decodeEventResult } from "@palimpsest/session/schema";
import { Effect, Layer, Result, Stream } from "effect";
import { LanguageModel, type Response } from "effect/ai";

/**
 * A part `kind` (text, reasoning, tool arguments of a call to `tool`)
 * streamed in `pieces`: its start, a delta per piece, its end.
 */
export const streamedPart = (
  kind: "text" | "reasoning" | "tool-params",
  id: string,
  pieces: ReadonlyArray<string>,
  tool = "note",
): Response.StreamPartEncoded[] => [
  kind === "tool-params"
    ? { type: "tool-params-start", id, name: tool }
    : { type: `${kind}-start`, id },
  ...pieces.map((delta): Response.StreamPartEncoded => ({
    type: `${kind}-delta`,
    id,
    delta,
  })),
  { type: `${kind}-end`, id },
];

/**
 * A loopback model: request k streams answer k of `script` (counted
 * modulo its length), one part every `gapMs` ms (none: all at once),
 * telling `onSent` once each part is sent.
 */
export const loopbackModel = (
  script: ReadonlyArray<ReadonlyArray<Response.StreamPartEncoded>>,
  gapMs = 0,
  onSent?: () => void,
): Layer.Layer<LanguageModel.LanguageModel> => {
  let request = 0;
  return Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: () => Effect.succeed([]),
      streamText: () => {
        const parts = Stream.fromIterable(
          script[request++ % script.length] ?? [],
        );
        return gapMs === 0 && onSent === undefined ? parts : Stream.tap(
          parts,
          () =>
            Effect.andThen(Effect.sleep(gapMs), Effect.sync(() => onSent?.())),
        );
      },
    }),
  );
};

/** One part of what a stream says. */
export type Said =
  | { readonly type: string; readonly id: string; readonly delta: string }
  | { readonly chunk: unknown };

const DELTAS = new Set(["text-delta", "reasoning-delta", "tool-params-delta"]);

const deltaOf = (chunk: unknown) => {
  if (typeof chunk !== "object" || chunk === null) return undefined;
  const type = Reflect.get(chunk, "type");
  const id = Reflect.get(chunk, "id");
  const delta = Reflect.get(chunk, "delta");
  return typeof type === "string" && DELTAS.has(type) &&
      typeof id === "string" && typeof delta === "string"
    ? { type, id, delta }
    : undefined;
};

/**
 * A part other than a delta as its type, id and name: the library's
 * encoding adds fields (`metadata`) that a script's parts leave out.
 */
const kindOf = (chunk: unknown): unknown => {
  if (typeof chunk !== "object" || chunk === null) return chunk;
  const name = Reflect.get(chunk, "name");
  const id = Reflect.get(chunk, "id");
  return {
    type: Reflect.get(chunk, "type"),
    ...(id === undefined ? {} : { id }),
    ...(name === undefined ? {} : { name }),
  };
};

/** The stream's chunks with consecutive deltas of one part joined. */
export const said = (chunks: Iterable<unknown>): Said[] => {
  const out: Said[] = [];
  for (const chunk of chunks) {
    const delta = deltaOf(chunk);
    const last = out[out.length - 1];
    if (
      delta !== undefined && last !== undefined && "delta" in last &&
      last.type === delta.type && last.id === delta.id
    ) {
      out[out.length - 1] = { ...last, delta: last.delta + delta.delta };
    } else {
      out.push(delta ?? { chunk: kindOf(chunk) });
    }
  }
  return out;
};

/**
 * Whether `partial` says a prefix of what `full` says: the same parts in
 * the same order, but the last one of `partial`, which may be the start of
 * its delta.
 */
export const isPrefixOf = (
  partial: ReadonlyArray<Said>,
  full: ReadonlyArray<Said>,
): boolean => {
  if (partial.length > full.length) return false;
  for (let i = 0; i < partial.length; i++) {
    const p = partial[i];
    const f = full[i];
    if (p === undefined || f === undefined) return false;
    if ("delta" in p) {
      if (!("delta" in f) || p.type !== f.type || p.id !== f.id) return false;
      const whole = p.delta === f.delta;
      if (
        !whole && (i !== partial.length - 1 || !f.delta.startsWith(p.delta))
      ) {
        return false;
      }
    } else if (JSON.stringify(p) !== JSON.stringify(f)) return false;
  }
  return true;
};

/** The partial batches of a log. */
export const partialsOf = (
  events: ReadonlyArray<SessionEvent>,
): AssistantPartialEvent[] =>
  events.flatMap((e) => e.type === "assistant/partial" ? [e] : []);

/**
 * The partial batches of the last request in a log's events (from the last
 * batch at offset 0 on), as what they say.
 */
export const lastPartialAnswer = (
  events: ReadonlyArray<SessionEvent>,
): Said[] => {
  const batches = partialsOf(events);
  let first = batches.length - 1;
  while (first > 0 && batches[first]?.data.offset !== 0) first--;
  return said(
    batches.slice(Math.max(0, first)).flatMap((b) =>
      b.data.stream.map((r) => r.chunk)
    ),
  );
};

/** The data of a user message "Go", id `u`. */
export const userGo = {
  id: "u",
  role: "user",
  source: { kind: "user" },
  content: [{ type: "text", text: "Go" }],
} as const;

/** The data of an `assistant/partial` batch of turn 0 holding `chunks`. */
export const partialData = (
  step: number,
  offset: number,
  chunks: ReadonlyArray<unknown>,
  source?: {
    readonly kind: "model";
    readonly provider: string;
    readonly model: string;
  },
) => ({
  turn: 0,
  step,
  offset,
  ...(source === undefined ? {} : { source }),
  stream: chunks.map((chunk) => ({ time: 7, chunk })),
});

/** The model of the crashed log. */
export const source = { kind: "model", provider: "p", model: "m" } as const;
/** A stored `assistant/partial` at `seq` (its time too) of turn 0 holding `chunks`. */
const partialAt = (
  seq: number,
  step: number,
  offset: number,
  chunks: ReadonlyArray<unknown>,
  from?: typeof source,
) => ({
  type: "assistant/partial",
  seq,
  time: seq,
  ignorable: true,
  data: partialData(step, offset, chunks, from),
});

/** A stream record at time 7. */
export const record = (chunk: unknown) => ({ time: 7, chunk });
const decode = (raw: ReadonlyArray<unknown>): SessionEvent[] =>
  raw.map((e) => Result.getOrThrow(decodeEventResult(e)));

/** A turn whose second step's answer was cut while it streamed. */
export const crashed = (): SessionEvent[] =>
  decode([
    { type: "turn/start", seq: 0, time: 1, data: { turn: 0 } },
    {
      type: "user/message",
      seq: 1,
      time: 1,
      surfaceOp: "append",
      data: userGo,
    },
    { type: "step/start", seq: 2, time: 2, data: { turn: 0, step: 0 } },
    partialAt(3, 0, 0, [
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Settled " },
    ], source),
    {
      type: "assistant/message",
      seq: 4,
      time: 4,
      surfaceOp: "append",
      data: {
        turn: 0,
        step: 0,
        stream: [],
        message: {
          id: "a",
          role: "assistant",
          source,
          content: [{ type: "text", text: "Settled answer." }],
        },
      },
    },
    { type: "step/end", seq: 5, time: 5, data: { turn: 0, step: 0 } },
    { type: "step/start", seq: 6, time: 6, data: { turn: 0, step: 1 } },
    partialAt(7, 1, 0, [
      { type: "reasoning-start", id: "r" },
      { type: "reasoning-delta", id: "r", delta: "Think." },
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Half an " },
    ], source),
    partialAt(8, 1, 4, [
      { type: "text-delta", id: "t", delta: "answer" },
      { type: "text-end", id: "t" },
      { type: "tool-params-start", id: "c1", name: "read" },
      { type: "tool-call", id: "c1", name: "read", params: {} },
      { type: "tool-params-start", id: "c2", name: "write" },
      { type: "tool-params-delta", id: "c2", delta: '{"pa' },
    ]),
  ]);
