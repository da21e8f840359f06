/**
 * {@link streamTurn}: the turn loop of `turn.ts` as a `Stream` of its
 * events.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import * as Queue from "effect/Queue";
import * as Stream from "effect/Stream";
import type { LanguageModel, Tool } from "effect/ai";
import type { SessionStore } from "../store/store.ts";
import type { RunTurnOptions, TurnError, TurnEvent } from "./turn_types.ts";
import { runTurn } from "./turn.ts";

/**
 * {@link runTurn} as a `Stream` of its {@link TurnEvent}s: the text as it
 * streams, each tool call, compaction, each step's end, and last
 * `turn-end` with the outcome. The stream fails with the turn's error;
 * stopping it early (`Stream.take`, an interrupted consumer) interrupts
 * the turn, which leaves what an interrupted `runTurn` leaves. An
 * `onEvent` in the options is still called, before each event is emitted.
 *
 * @param options The options of {@link runTurn}.
 * @returns `Stream<TurnEvent, TurnError, SessionStore | LanguageModel |
 * the tools' handler services>`.
 *
 * @example Showing the answer as it streams
 * ```ts
 * import { streamTurn } from "@palimpsest/session/ai";
 * import { SessionStore } from "@palimpsest/session";
 * import { finish, layerTempJsonlStore, scriptedModel, text } from "@palimpsest/session/testing";
 * import { Effect, Layer, Stream } from "effect";
 * import { Toolkit } from "effect/ai";
 * import assert from "node:assert/strict";
 *
 * const model = scriptedModel(() => [...text("Hello there."), finish("stop")]);
 * const program = Effect.gen(function* () {
 *   const store = yield* SessionStore;
 *   const handle = yield* store.create({ id: "s", createdAt: 0, isSeeded: false });
 *   const toolkit = yield* Toolkit.empty;
 *   return yield* Stream.runCollect(streamTurn({ handle, toolkit, model: { provider: "scripted", model: "m" }, input: "Hi" }));
 * });
 * const events = await Effect.runPromise(Effect.scoped(program).pipe(
 *   Effect.provide(Layer.mergeAll(model.layer, layerTempJsonlStore())),
 * ));
 * assert.deepEqual(events.flatMap((e) => e.type === "text-delta" ? [e.delta] : []), ["Hello there."]);
 * assert.equal(events.at(-1)?.type, "turn-end");
 * ```
 */
export function streamTurn<Tools extends Record<string, Tool.Any>>(
  options: RunTurnOptions<Tools>,
): Stream.Stream<
  TurnEvent,
  TurnError,
  | SessionStore
  | LanguageModel.LanguageModel
  | Tool.HandlerServices<Tools[keyof Tools]>
> {
  return Stream.callback<
    TurnEvent,
    TurnError,
    | SessionStore
    | LanguageModel.LanguageModel
    | Tool.HandlerServices<Tools[keyof Tools]>
  >((queue) => {
    const onEvent = options.onEvent;
    return runTurn({
      ...options,
      onEvent: (event) =>
        Effect.andThen(
          onEvent === undefined ? Effect.void : onEvent(event),
          Effect.asVoid(Queue.offer(queue, event)),
        ),
    }).pipe(
      Effect.matchCauseEffect({
        onFailure: (cause) => Queue.failCause(queue, cause),
        onSuccess: () => Queue.end(queue),
      }),
    );
  });
}
