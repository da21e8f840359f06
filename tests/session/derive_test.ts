import assert from "node:assert/strict";
import {
  deriveMessages,
  deriveMessagesWithSources,
  emptySurface,
} from "@palimpsest/session";
import { fold } from "../_helpers/decider.ts";
import {
  assistant,
  opaque,
  replace,
  system,
  toolCall,
  toolResult,
  turnStart,
  user,
} from "../_helpers/build.ts";

Deno.test("deriveMessages of the empty surface is empty", () => {
  assert.deepEqual(deriveMessages(emptySurface), []);
  assert.deepEqual(deriveMessagesWithSources(emptySurface), []);
});

Deno.test("deriveMessages projects each node in surface order", () => {
  const surface = fold([
    system(0),
    turnStart(1),
    user(2),
    assistant(3, { callId: "c3" }),
    toolCall(4, "c3"),
    toolResult(5, { callId: "c3", sources: [4] }),
    opaque(6),
  ]);
  const messages = deriveMessages(surface);
  assert.deepEqual(messages.map((m) => [m.id, m.role]), [
    ["sys0", "system"],
    ["u2", "user"],
    ["a3", "assistant"],
    ["r5", "user"],
  ]);
  // user/message projects its data; the others their data.message.
  assert.deepEqual(messages[1], user(2).data);
  assert.deepEqual(messages[3], {
    id: "r5",
    role: "user",
    content: [{
      type: "tool-result",
      toolCallId: "c3",
      content: [{ type: "text", text: "result 5" }],
    }],
    source: { kind: "tool", callId: "c3" },
  });
});

Deno.test("empty system and assistant messages keep their node but derive nothing", () => {
  const surface = fold([
    system(0, { text: "" }),
    user(1),
    assistant(2, { empty: true }),
    user(3),
  ]);
  assert.equal(surface.length, 4);
  assert.deepEqual(deriveMessagesWithSources(surface).map((m) => m.seq), [
    1,
    3,
  ]);
});

Deno.test("deriveMessagesWithSources pairs each message with its node", () => {
  const surface = fold([
    user(0),
    user(1),
    user(2),
    user(3, { op: replace(0, 1), sources: [0, 1] }),
  ]);
  assert.deepEqual(
    deriveMessagesWithSources(surface).map(({ seq, message }) => [
      seq,
      message.id,
    ]),
    [[3, "u3"], [2, "u2"]],
  );
});

Deno.test("deriving never changes the surface", () => {
  const surface = fold([user(0), assistant(1)]);
  const first = JSON.stringify(deriveMessages(surface));
  deriveMessagesWithSources(surface);
  assert.equal(JSON.stringify(deriveMessages(surface)), first);
  assert.equal(surface.length, 2);
});
