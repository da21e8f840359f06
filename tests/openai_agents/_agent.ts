/**
 * The agent of the end-to-end tests, on the real `@openai/agents` runner:
 * one `add` tool, the runner's OpenAI provider pointed at a loopback
 * Responses server, the session kept in a JSONL store. Run as a program
 * (`deno run -A _agent.ts <root> <baseURL> <session id> <input> [hang]`), it
 * runs one turn and prints the final output; with `hang`, the tool prints
 * `TOOL RUNNING` and never returns, so that the parent can kill the process
 * there.
 *
 * @module
 */
import { Agent, OpenAIProvider, Runner, tool } from "@openai/agents";
import { z } from "zod";
import { layerJsonlStore } from "@palimpsest/session";
import {
  type AgentsCompaction,
  openAgentsSession,
} from "@palimpsest/session/openai-agents";

/** The agent, its `add` tool hanging when asked to. */
export const makeAgent = (hang: boolean): Agent =>
  new Agent({
    name: "adder",
    instructions: "Add numbers with the add tool.",
    model: "gpt-5",
    tools: [tool({
      name: "add",
      description: "Adds two numbers",
      parameters: z.object({ a: z.number(), b: z.number() }),
      execute: async ({ a, b }) => {
        if (hang) {
          console.log("TOOL RUNNING");
          await new Promise(() => {});
        }
        return String(a + b);
      },
    })],
  });

/** The SDK's runner, its OpenAI provider pointed at `baseURL`, no tracing. */
export const runnerOn = (baseURL: string): Runner =>
  new Runner({
    modelProvider: new OpenAIProvider({
      apiKey: "test",
      baseURL,
      useResponses: true,
    }),
    tracingDisabled: true,
  });

/**
 * Runs one turn of the agent on the session `id` of the store at `root`,
 * against the server at `baseURL`.
 */
export const runTurn = async (
  baseURL: string,
  root: string,
  id: string,
  input: string,
  hang = false,
  compaction?: AgentsCompaction,
): Promise<unknown> => {
  const session = await openAgentsSession(layerJsonlStore({ root }), {
    sessionId: id,
    model: "gpt-5",
    ...(compaction === undefined ? {} : { compaction }),
  });
  try {
    const result = await runnerOn(baseURL).run(makeAgent(hang), input, {
      session,
    });
    return result.finalOutput;
  } finally {
    await session.close();
  }
};

if (import.meta.main) {
  const [root = "", baseURL = "", id = "", input = "", mode] = Deno.args;
  console.log(
    JSON.stringify(await runTurn(baseURL, root, id, input, mode === "hang")),
  );
}
