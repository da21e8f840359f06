/**
 * A loopback OpenAI Responses server for the `@openai/agents` tests: a
 * `Deno.serve` on 127.0.0.1 that answers `POST /v1/responses` (plain JSON,
 * or server-sent events for a streamed request) with scripted outputs in
 * order, and keeps every request
 * body with its errors by the published request schema
 * (`provider-specs`) and by the pairing rule (each `function_call`
 * answered once by a later `function_call_output`, each output answering
 * an earlier call).
 *
 * @module
 */
import type { ErrorObject } from "ajv/dist/2020.js";
import { schemaChecks } from "../_helpers/provider_schemas.ts";
import { type ScriptedAnswer, serveLocalHttp } from "../_helpers/local_http.ts";

/** A request as received. */
export interface Received {
  readonly body: Record<string, unknown>;
  /** The schema's errors; empty when valid. */
  readonly errors: ReadonlyArray<ErrorObject>;
  /** The call ids not paired, and outputs without a call. */
  readonly unpaired: ReadonlyArray<string>;
}

/** A running server. */
export interface ResponsesServer {
  readonly baseURL: string;
  readonly requests: Received[];
  readonly close: () => Promise<void>;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The call ids of `input` not answered once after their call, in order. */
export const unpaired = (input: unknown): string[] => {
  const out: string[] = [];
  const open = new Set<string>();
  const answered = new Set<string>();
  for (const item of Array.isArray(input) ? input : []) {
    if (!isRecord(item)) continue;
    const id = String(item["call_id"]);
    if (item["type"] === "function_call") open.add(id);
    if (item["type"] === "function_call_output") {
      if (!open.has(id) || answered.has(id)) out.push(`output ${id}`);
      answered.add(id);
    }
  }
  for (const id of open) if (!answered.has(id)) out.push(`call ${id}`);
  return out;
};

let responses = 0;

const outputOf = (answer: ScriptedAnswer): unknown =>
  "text" in answer
    ? {
      type: "message",
      id: `msg_${responses}`,
      role: "assistant",
      status: "completed",
      content: [{
        type: "output_text",
        text: answer.text,
        annotations: [],
        logprobs: [],
      }],
    }
    : {
      type: "function_call",
      id: `fc_${answer.call.id}`,
      call_id: answer.call.id,
      name: answer.call.name,
      arguments: answer.call.args,
      status: "completed",
    };

/** A whole response of one answer. */
const responseOf = (answer: ScriptedAnswer): Record<string, unknown> => ({
  id: `resp_${responses}`,
  object: "response",
  created_at: 1_700_000_000,
  model: "gpt-5",
  status: "completed",
  incomplete_details: null,
  output: [outputOf(answer)],
  usage: {
    input_tokens: 100,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 10,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 110,
  },
});

/** A response as server-sent events: created, its item, completed. */
const streamed = (response: Record<string, unknown>): Response => {
  const output = Array.isArray(response["output"]) ? response["output"] : [];
  const events: Array<Record<string, unknown>> = [
    {
      type: "response.created",
      response: { ...response, status: "in_progress", output: [] },
    },
    ...output.flatMap((item, i) => [
      { type: "response.output_item.added", output_index: i, item },
      { type: "response.output_item.done", output_index: i, item },
    ]),
    { type: "response.completed", response },
  ];
  const body = events.map((event, i) =>
    `event: ${event["type"]}\ndata: ${
      JSON.stringify({ ...event, sequence_number: i })
    }\n\n`
  ).join("");
  return new Response(body, {
    headers: { "content-type": "text/event-stream" },
  });
};

/** Starts the server; it answers `script` in order, then "Done.". */
export const serveResponses = (
  script: ReadonlyArray<ScriptedAnswer>,
): ResponsesServer => {
  const check = schemaChecks()["OpenAI Responses"];
  const requests: Received[] = [];
  let next = 0;
  const server = serveLocalHttp(async (request) => {
    const body: unknown = await request.json();
    const record = isRecord(body) ? body : {};
    requests.push({
      body: record,
      errors: check(body),
      unpaired: unpaired(record["input"]),
    });
    const answer = script[next++] ?? { text: "Done." };
    responses++;
    const response = responseOf(answer);
    if (record["stream"] === true) return streamed(response);
    return Response.json(response);
  });
  return {
    baseURL: `${server.origin}/v1`,
    requests,
    close: server.close,
  };
};
