/**
 * `runTurn` on a rewound session: the turn after a rewind sends what the
 * rewound surface derives, paired, and nothing of the branch it left.
 */
import assert from "node:assert/strict";
import { Effect, Layer, Result } from "effect";
import {
  checkTranscript,
  deriveMessages,
  Draft,
  rewind,
  Session,
} from "@palimpsest/session";
import { runTurn, toPrompt } from "@palimpsest/session/ai";
import { call, finish, scriptedModel, tempStore, text } from "./_scripted.ts";
import { newSession } from "./_session.ts";
import { readTools as tools, scriptedModelId as model } from "./_read_tool.ts";

Deno.test("runTurn continues on a rewound session with what the rewound surface derives", async () => {
  const scripted = scriptedModel({
    stream: [
      // Turn 0: a call, then an answer.
      {
        parts: [call("c1", "read", { path: "a.txt" }), finish("tool-calls")],
      },
      { parts: [...text("It says hello."), finish()] },
      // Turn 1, then taken off by the rewind.
      { parts: [...text("Second answer."), finish()] },
      // The turn after the rewind.
      { parts: [...text("After the rewind."), finish()] },
    ],
  });
  const handlers = tools.toLayer({
    read: ({ path }) => Effect.succeed(`contents of ${path}`),
  });
  const program = Effect.gen(function* () {
    const { store, handle } = yield* newSession();
    const toolkit = yield* Effect.provide(tools, handlers);
    const turn = (input: string | undefined) =>
      runTurn({
        handle,
        toolkit,
        model,
        ...(input === undefined ? {} : { input }),
      }).pipe(Effect.provide(Layer.merge(scripted.layer, handlers)));
    const first = yield* turn("What is in a.txt?");
    yield* turn("Something else?");
    // Back to right after turn 0, with an edited question.
    const { session: rewound } = yield* store.update(
      handle,
      (s) =>
        rewind(s, {
          to: first.session.surface.nextSeq - 1,
          event: Draft.user("Where is a.txt?", { id: "edited" }),
          expect: { dropsTurnsFrom: 1 },
        }),
    );
    const outcome = yield* turn(undefined);
    return { rewound, outcome };
  });
  const { rewound, outcome } = await Effect.runPromise(
    program.pipe(Effect.scoped, Effect.provide(tempStore())),
  );
  assert.equal(outcome.reason, "completed");
  assert.equal(outcome.turn, 2);
  const request = scripted.streamed[3];
  assert.deepEqual(
    JSON.stringify(request),
    JSON.stringify(toPrompt(deriveMessages(rewound.surface))),
  );
  const sent = JSON.stringify(request);
  assert.ok(sent.includes("contents of a.txt"));
  assert.ok(sent.includes("Where is a.txt?"));
  assert.ok(!sent.includes("Something else?"));
  assert.ok(!sent.includes("Second answer."));
  // The session after the turn: turn 0, the edit, the new answer; paired.
  const messages = deriveMessages(outcome.session.surface);
  assert.deepEqual(checkTranscript(messages), []);
  assert.deepEqual(
    messages.map((m) => m.role),
    ["user", "assistant", "user", "assistant", "user", "assistant"],
  );
  assert.ok(
    Result.getOrThrow(Session.events(outcome.session)).some((e) =>
      e.type === "user/message" && typeof e.surfaceOp === "object" &&
      e.surfaceOp.op === "rewind"
    ),
  );
});
