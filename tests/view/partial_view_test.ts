/**
 * The view shows what a cut answer had streamed beside the interrupted
 * turn, marked as never sent to the model.
 */
import { Session } from "@palimpsest/session";
import { interruptedTurnClosers } from "@palimpsest/session/internal";
import { renderSessionHtml } from "@palimpsest/session/view";
import { Effect, Result } from "effect";
import assert from "node:assert/strict";
import { crashed } from "../_helpers/partial_stream.ts";

Deno.test("renderSessionHtml() shows a partial answer beside its interrupted turn", () => {
  const events = crashed();
  const session = Effect.runSync(
    Session.appendEvents(
      Session.make({ id: "s", createdAt: 0, isSeeded: false }),
      [...events, ...interruptedTurnClosers(events)],
    ),
  );
  const html = Result.getOrThrow(renderSessionHtml(session));
  assert.match(
    html,
    /Partial answer \(#7, #8\), cut while it streamed; not sent to the model/,
  );
  assert.match(html, /Half an answer/);
  assert.match(
    html,
    /call cut while its arguments streamed\] write \{&quot;pa/,
  );
  // The settled answer's batch is not a partial answer.
  assert.doesNotMatch(html, /Partial answer \(#3/);
});
