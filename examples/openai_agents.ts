/**
 * An OpenAI Agents SDK agent whose history is kept in a palimpsest session
 * log (a JSONL file): two runs with a tool, a `popItem`, and the log that
 * kept everything.
 *
 * `deno run -A examples/openai_agents.ts` runs offline on a scripted model;
 * with `OPENAI_API_KEY` set, on OpenAI's Responses API (`gpt-5-mini`, or
 * `PALIMPSEST_DEMO_MODEL`).
 *
 * @module
 */
import {
  Agent,
  type AgentInputItem,
  type Model,
  type ModelResponse,
  Runner,
  tool,
  Usage,
} from "@openai/agents";
import { z } from "zod";
import { branches, layerJsonlStore, SessionStore } from "@palimpsest/session";
import { openAgentsSession } from "@palimpsest/session/openai-agents";
import { Effect } from "effect";

/** A model that calls `add` once per run, then answers with its result. */
const scripted = (): Model => {
  let calls = 0;
  const answer = (output: ModelResponse["output"]): Promise<ModelResponse> =>
    Promise.resolve({ usage: new Usage(), output });
  return {
    getResponse: (request) => {
      const input: ReadonlyArray<AgentInputItem> =
        typeof request.input === "string" ? [] : request.input;
      const last = input.at(-1);
      if (last?.type === "function_call_result") {
        const output = typeof last.output === "string"
          ? last.output
          : !Array.isArray(last.output) && last.output.type === "text"
          ? last.output.text
          : JSON.stringify(last.output);
        return answer([{
          type: "message",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text: `It is ${output}.` }],
        }]);
      }
      calls++;
      return answer([{
        type: "function_call",
        callId: `call_${calls}`,
        name: "add",
        arguments: JSON.stringify({ a: calls, b: 2 }),
        status: "completed",
      }]);
    },
    getStreamedResponse: () => {
      throw new Error("The scripted model does not stream");
    },
  };
};

const online = (Deno.env.get("OPENAI_API_KEY") ?? "") !== "";
const agent = new Agent({
  name: "adder",
  instructions: "Add numbers with the add tool, then give the sum.",
  model: online
    ? (Deno.env.get("PALIMPSEST_DEMO_MODEL") ?? "gpt-5-mini")
    : scripted(),
  tools: [tool({
    name: "add",
    description: "Adds two numbers",
    parameters: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => Promise.resolve(String(a + b)),
  })],
});
const runner = new Runner({ tracingDisabled: true });

const root = Deno.makeTempDirSync({ prefix: "openai-agents-" });
const store = layerJsonlStore({ root });
const session = await openAgentsSession(store, { sessionId: "adder" });
for (const question of ["What is 1 + 2?", "And 2 + 2?"]) {
  const result = await runner.run(agent, question, { session });
  console.log(`> ${question}\n${result.finalOutput}`);
}
console.log(`items: ${(await session.getItems()).length}`);
const popped = await session.popItem();
console.log(
  `popped: ${popped?.type} (${(await session.getItems()).length} items left)`,
);
await session.close();

// The log kept the popped item: the rewind left it on a branch.
const kept = await Effect.runPromise(
  Effect.scoped(Effect.gen(function* () {
    const sessions = yield* SessionStore;
    const reader = yield* sessions.open("adder", { wholeLog: true });
    return {
      events: reader.session.surface.nextSeq,
      branches: (yield* branches(reader.session)).length,
    };
  })).pipe(Effect.provide(store)),
);
console.log(`log: ${kept.events} events, ${kept.branches} branches`);
console.log(
  `file: ${root}/adder.jsonl (try: deno task cli derive ${root}/adder.jsonl)`,
);
