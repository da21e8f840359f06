/**
 * A loopback provider for end-to-end tests of the real AI SDK clients: a
 * `Deno.serve` server on 127.0.0.1 (port 0) that answers OpenAI Responses
 * (`/v1/responses`), OpenAI Chat Completions (`/v1/chat/completions`) and
 * Anthropic Messages (`/v1/messages`) in each provider's wire format:
 * server-sent events for a streamed request, a JSON body for a plain one,
 * and each provider's error body for a refusal. Every request body is
 * validated against the provider's published request schema
 * (`../shared/provider-specs/`) and kept with its errors. Faults for the
 * provider-fault campaign: an answer cut after its first N events (a clean
 * close, or a broken connection), any status, headers and body as given, a
 * stall before the headers or mid-answer. {@link modelFor} gives the real
 * client of a dialect and {@link abortWatch} a `fetch` that tells when the
 * client aborted.
 *
 * @module
 */
import type { ErrorObject } from "ajv/dist/2020.js";
import type { LanguageModelV4 } from "@ai-sdk/provider";
import { createOpenAI } from "@ai-sdk/openai";
import { createAnthropic } from "@ai-sdk/anthropic";
import { schemaChecks, type Target } from "../_helpers/provider_schemas.ts";
import { serveLocalHttp } from "../_helpers/local_http.ts";

/** The three wire formats served. */
export type Dialect = "openai-responses" | "openai-chat" | "anthropic";

/** Every dialect, each test runs against all of them. */
export const DIALECTS: ReadonlyArray<Dialect> = [
  "openai-responses",
  "openai-chat",
  "anthropic",
];

/**
 * The real AI SDK client of `dialect`, pointed at `baseURL`, sending its
 * requests through `fetch` (the global one by default).
 */
export const modelFor = (
  dialect: Dialect,
  baseURL: string,
  fetch?: typeof globalThis.fetch,
): LanguageModelV4 => {
  const settings = {
    baseURL,
    apiKey: "test",
    ...(fetch === undefined ? {} : { fetch }),
  };
  switch (dialect) {
    case "openai-responses":
      return createOpenAI(settings).responses("gpt-5");
    case "openai-chat":
      return createOpenAI(settings).chat("gpt-5");
    case "anthropic":
      return createAnthropic(settings)("claude-sonnet-4-5");
  }
};

/**
 * A `fetch` that tells when the client aborts a request it sent. The
 * server's own view (`Loopback.aborted` for a stalled request) misses some
 * aborts: Deno's server does not signal the abort of a request whose body
 * is over about a kilobyte before it answers.
 */
export const abortWatch = (): {
  readonly fetch: typeof globalThis.fetch;
  readonly aborted: Promise<void>;
} => {
  let onAbort = (): void => {};
  const aborted = new Promise<void>((resolve) => {
    onAbort = resolve;
  });
  return {
    aborted,
    fetch: (input, init) => {
      init?.signal?.addEventListener("abort", () => onAbort(), { once: true });
      return globalThis.fetch(input, init);
    },
  };
};

/** One tool call of a scripted answer. */
export interface ScriptedCall {
  readonly id: string;
  readonly name: string;
  /** The arguments, as the JSON text the provider streams. */
  readonly args: string;
}

/** What the server answers to one streamed request. */
export type StreamAnswer =
  | {
    readonly text?: string;
    readonly calls?: ReadonlyArray<ScriptedCall>;
    /** Send the text (no end) and hold the response open until aborted. */
    readonly hang?: boolean;
  }
  | { readonly refuse: "overflow" }
  /**
   * Refuse as an overloaded provider does: Anthropic's 529
   * `overloaded_error`, OpenAI's 503 `server_error`, with `retry-after-ms`.
   */
  | { readonly refuse: "overloaded"; readonly retryAfterMs: number }
  /** Send nothing, not even the headers, until the client goes away. */
  | { readonly stall: true }
  | {
    readonly text?: string;
    readonly calls?: ReadonlyArray<ScriptedCall>;
    /**
     * Send only the first `cut` SSE events of the whole answer, then end
     * the body cleanly (no `[DONE]`) or, with `reset`, break the
     * connection.
     */
    readonly cut: number;
    readonly reset?: boolean;
  }
  /** Answer with this status, headers and body as they are. */
  | {
    readonly raw: {
      readonly status: number;
      readonly headers?: Readonly<Record<string, string>>;
      readonly body: string;
    };
  };

/** A request as the server received it. */
export interface ReceivedRequest {
  readonly path: string;
  readonly body: Record<string, unknown>;
  readonly streamed: boolean;
  /** The schema's errors for the body; empty when it is valid. */
  readonly errors: ReadonlyArray<ErrorObject>;
  /**
   * The body holds tool calls or results but defines no tool, which
   * providers refuse ("Requests which include `tool_use` or `tool_result`
   * blocks must define tools").
   */
  readonly toolsMissing: boolean;
}

/** A running loopback provider. */
export interface Loopback {
  /** The base URL to give the client (`http://127.0.0.1:<port>/v1`). */
  readonly baseURL: string;
  /** Every request received, in order. */
  readonly requests: ReceivedRequest[];
  /** Resolves when a stalled request has arrived. */
  readonly stalled: Promise<void>;
  /**
   * Resolves when the client went away from a held (hanging) response: its
   * body stream was cancelled.
   */
  readonly aborted: Promise<void>;
  /** Stops the server. */
  readonly close: () => Promise<void>;
}

const TARGET: Record<Dialect, Target> = {
  "openai-responses": "OpenAI Responses",
  "openai-chat": "OpenAI Chat",
  "anthropic": "Anthropic Messages",
};

const PATH: Record<Dialect, string> = {
  "openai-responses": "/v1/responses",
  "openai-chat": "/v1/chat/completions",
  "anthropic": "/v1/messages",
};

const usage = { input: 120, output: 12 };

/** {@link usage} as OpenAI Chat Completions reports it. */
const chatUsage = {
  prompt_tokens: usage.input,
  completion_tokens: usage.output,
  total_tokens: usage.input + usage.output,
};

/** {@link usage} as OpenAI Responses reports it. */
const responsesUsage = {
  input_tokens: usage.input,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: usage.output,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: usage.input + usage.output,
};

/** An SSE event: a name (when the provider sends one) and its JSON. */
type Event = readonly [name: string | undefined, data: unknown];

/**
 * The SSE events of an answer in one provider's wire format; with `end`
 * false the answer is left unfinished, as a stream cut short.
 */
type EventScript = (
  answer: { text?: string; calls?: ReadonlyArray<ScriptedCall> },
  end: boolean,
) => Event[];

const responsesEvents: EventScript = (answer, end) => {
  const out: Event[] = [];
  let seq = 0;
  const ev = (data: Record<string, unknown>): Event => [
    String(data["type"]),
    { ...data, sequence_number: seq++ },
  ];
  out.push(ev({
    type: "response.created",
    response: { id: "resp_1", created_at: 1_700_000_000, model: "gpt-5" },
  }));
  let index = 0;
  if (answer.text !== undefined) {
    const item = { type: "message", id: "msg_1", role: "assistant" };
    out.push(ev({
      type: "response.output_item.added",
      output_index: index,
      item: { ...item, status: "in_progress", content: [] },
    }));
    for (const delta of chunks(answer.text)) {
      out.push(ev({
        type: "response.output_text.delta",
        item_id: "msg_1",
        output_index: index,
        content_index: 0,
        delta,
      }));
    }
    if (!end) return out;
    out.push(ev({
      type: "response.output_item.done",
      output_index: index,
      item: {
        ...item,
        status: "completed",
        content: [{ type: "output_text", text: answer.text, annotations: [] }],
      },
    }));
    index++;
  }
  for (const call of answer.calls ?? []) {
    const item = {
      type: "function_call",
      id: `fc_${call.id}`,
      call_id: call.id,
      name: call.name,
    };
    out.push(ev({
      type: "response.output_item.added",
      output_index: index,
      item: { ...item, arguments: "", status: "in_progress" },
    }));
    for (const delta of chunks(call.args)) {
      out.push(ev({
        type: "response.function_call_arguments.delta",
        item_id: item.id,
        output_index: index,
        delta,
      }));
    }
    out.push(ev({
      type: "response.output_item.done",
      output_index: index,
      item: { ...item, arguments: call.args, status: "completed" },
    }));
    index++;
  }
  out.push(ev({
    type: "response.completed",
    response: {
      id: "resp_1",
      created_at: 1_700_000_000,
      model: "gpt-5",
      status: "completed",
      incomplete_details: null,
      usage: responsesUsage,
    },
  }));
  return out;
};

const chatEvents: EventScript = (answer, end) => {
  const envelope = (fields: Record<string, unknown>): Event => [
    undefined,
    {
      id: "chatcmpl-1",
      object: "chat.completion.chunk",
      created: 1_700_000_000,
      model: "gpt-5",
      ...fields,
    },
  ];
  const chunk = (choice: Record<string, unknown>): Event =>
    envelope({ choices: [{ index: 0, finish_reason: null, ...choice }] });
  const out: Event[] = [
    chunk({ delta: { role: "assistant", content: "" } }),
  ];
  for (const delta of chunks(answer.text ?? "")) {
    out.push(chunk({ delta: { content: delta } }));
  }
  if (!end) return out;
  for (const [i, call] of (answer.calls ?? []).entries()) {
    out.push(chunk({
      delta: {
        tool_calls: [{
          index: i,
          id: call.id,
          type: "function",
          function: { name: call.name, arguments: "" },
        }],
      },
    }));
    for (const delta of chunks(call.args)) {
      out.push(chunk({
        delta: { tool_calls: [{ index: i, function: { arguments: delta } }] },
      }));
    }
  }
  const calls = (answer.calls ?? []).length > 0;
  out.push(chunk({ delta: {}, finish_reason: calls ? "tool_calls" : "stop" }));
  out.push(envelope({
    choices: [],
    usage: chatUsage,
  }));
  return out;
};

const anthropicEvents: EventScript = (answer, end) => {
  const ev = (data: Record<string, unknown>): Event => [
    String(data["type"]),
    data,
  ];
  const out: Event[] = [ev({
    type: "message_start",
    message: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: usage.input, output_tokens: 1 },
    },
  })];
  let index = 0;
  if (answer.text !== undefined) {
    out.push(ev({
      type: "content_block_start",
      index,
      content_block: { type: "text", text: "" },
    }));
    for (const text of chunks(answer.text)) {
      out.push(ev({
        type: "content_block_delta",
        index,
        delta: { type: "text_delta", text },
      }));
    }
    if (!end) return out;
    out.push(ev({ type: "content_block_stop", index }));
    index++;
  }
  for (const call of answer.calls ?? []) {
    out.push(ev({
      type: "content_block_start",
      index,
      content_block: {
        type: "tool_use",
        id: call.id,
        name: call.name,
        input: {},
      },
    }));
    for (const partial_json of chunks(call.args)) {
      out.push(ev({
        type: "content_block_delta",
        index,
        delta: { type: "input_json_delta", partial_json },
      }));
    }
    out.push(ev({ type: "content_block_stop", index }));
    index++;
  }
  const calls = (answer.calls ?? []).length > 0;
  out.push(ev({
    type: "message_delta",
    delta: {
      stop_reason: calls ? "tool_use" : "end_turn",
      stop_sequence: null,
    },
    usage: { output_tokens: usage.output },
  }));
  out.push(ev({ type: "message_stop" }));
  return out;
};

/**
 * A text in pieces of at most 8 characters, as a provider streams it; a
 * long one (over 512 characters) in 64 pieces.
 */
const chunks = (text: string): string[] => {
  const out: string[] = [];
  const size = Math.max(8, Math.ceil(text.length / 64));
  for (let i = 0; i < text.length; i += size) {
    out.push(text.slice(i, i + size));
  }
  return out;
};

/** The SSE events of a whole answer in `dialect`, `[DONE]` aside. */
export const answerEvents = (
  dialect: Dialect,
  answer: { text?: string; calls?: ReadonlyArray<ScriptedCall> },
): ReadonlyArray<string> =>
  EVENTS[dialect](answer, true).map(([name, data]) =>
    (name === undefined ? "" : `event: ${name}\n`) +
    `data: ${JSON.stringify(data)}\n\n`
  );

const sse = (dialect: Dialect, events: ReadonlyArray<Event>): string =>
  events.map(([name, data]) =>
    (name === undefined ? "" : `event: ${name}\n`) +
    `data: ${JSON.stringify(data)}\n\n`
  ).join("") + (dialect === "openai-chat" ? "data: [DONE]\n\n" : "");

const EVENTS: Record<Dialect, EventScript> = {
  "openai-responses": responsesEvents,
  "openai-chat": chatEvents,
  "anthropic": anthropicEvents,
};

/** A plain (not streamed) text answer, as the provider's JSON body. */
const textBody = (dialect: Dialect, text: string): unknown => {
  switch (dialect) {
    case "openai-responses":
      return {
        id: "resp_2",
        object: "response",
        created_at: 1_700_000_000,
        model: "gpt-5",
        status: "completed",
        incomplete_details: null,
        output: [{
          type: "message",
          id: "msg_2",
          role: "assistant",
          status: "completed",
          content: [{ type: "output_text", text, annotations: [] }],
        }],
        usage: responsesUsage,
      };
    case "openai-chat":
      return {
        id: "chatcmpl-2",
        object: "chat.completion",
        created: 1_700_000_000,
        model: "gpt-5",
        choices: [{
          index: 0,
          message: { role: "assistant", content: text },
          finish_reason: "stop",
        }],
        usage: chatUsage,
      };
    case "anthropic":
      return {
        id: "msg_2",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [{ type: "text", text }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: usage.input, output_tokens: usage.output },
      };
  }
};

/** Whether a body holds tool calls or results but defines no tool. */
const toolsMissing = (body: Record<string, unknown>): boolean => {
  const tools = body["tools"];
  if (Array.isArray(tools) && tools.length > 0) return false;
  const turns = JSON.stringify(body["messages"] ?? body["input"] ?? []);
  return /"type":"(tool_use|tool_result|function_call|function_call_output)"|"role":"tool"|"tool_calls":\[/
    .test(turns);
};

/** Each provider's answer to an overloaded request: status and body. */
const overloaded = (dialect: Dialect): [number, unknown] =>
  dialect === "anthropic"
    ? [529, {
      type: "error",
      error: { type: "overloaded_error", message: "Overloaded" },
    }]
    : [503, {
      error: {
        message: "The server is overloaded, please try again later.",
        type: "server_error",
        param: null,
        code: null,
      },
    }];

/** Each provider's refusal of a request too long for the context window. */
const overflowBody = (dialect: Dialect): unknown =>
  dialect === "anthropic"
    ? {
      type: "error",
      error: {
        type: "invalid_request_error",
        message: "prompt is too long: 210000 tokens > 200000 maximum",
      },
    }
    : {
      error: {
        message: dialect === "openai-chat"
          ? "This model's maximum context length is 128000 tokens. However, your messages resulted in 210000 tokens. Please reduce the length of the messages."
          : "Your input exceeds the context window of this model. Please adjust your input and try again.",
        type: "invalid_request_error",
        param: dialect === "openai-chat" ? "messages" : "input",
        code: "context_length_exceeded",
      },
    };

/**
 * Starts a loopback provider for `dialect` that answers streamed requests
 * with `stream` in order and plain requests with `summaries` in order.
 */
export const serveLoopback = (
  dialect: Dialect,
  script: {
    readonly stream: ReadonlyArray<StreamAnswer>;
    readonly summaries?: ReadonlyArray<string>;
  },
): Loopback => {
  const check = schemaChecks()[TARGET[dialect]];
  const requests: ReceivedRequest[] = [];
  let streamed = 0;
  let plain = 0;
  let onAbort = (): void => {};
  const aborted = new Promise<void>((resolve) => {
    onAbort = resolve;
  });
  let onStall = (): void => {};
  const stalled = new Promise<void>((resolve) => {
    onStall = resolve;
  });
  const json = (status: number, body: unknown): Response =>
    new Response(JSON.stringify(body), {
      status,
      headers: { "content-type": "application/json" },
    });
  const server = serveLocalHttp(async (request) => {
    const url = new URL(request.url);
    const body = await request.json();
    const isStream = body.stream === true;
    requests.push({
      path: url.pathname,
      body,
      streamed: isStream,
      errors: check(body),
      toolsMissing: toolsMissing(body),
    });
    if (url.pathname !== PATH[dialect]) {
      return json(404, { error: { message: `No route ${url.pathname}` } });
    }
    if (!isStream) {
      const text = script.summaries?.[plain++] ?? "Earlier: notes.";
      return json(200, textBody(dialect, text));
    }
    const answer = script.stream[streamed++] ?? { text: "Done." };
    if ("refuse" in answer) {
      if (answer.refuse === "overflow") return json(400, overflowBody(dialect));
      const [status, refusal] = overloaded(dialect);
      return new Response(JSON.stringify(refusal), {
        status,
        headers: {
          "content-type": "application/json",
          "retry-after-ms": String(answer.retryAfterMs),
        },
      });
    }
    if ("raw" in answer) {
      return new Response(answer.raw.body, {
        status: answer.raw.status,
        headers: answer.raw.headers ?? { "content-type": "application/json" },
      });
    }
    if ("cut" in answer) {
      const sent = answerEvents(dialect, answer).slice(0, answer.cut).join("");
      const bytes = new TextEncoder().encode(sent);
      return new Response(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(bytes);
            if (answer.reset === true) {
              controller.error(new Error("connection reset"));
            } else controller.close();
          },
        }),
        {
          headers: {
            "content-type": "text/event-stream",
            "cache-control": "no-cache",
          },
        },
      );
    }
    if ("stall" in answer) {
      // No response is ever sent: the request's signal aborts only when the
      // client closes the connection.
      onStall();
      await new Promise<void>((resolve) =>
        request.signal.addEventListener("abort", () => resolve(), {
          once: true,
        })
      );
      onAbort();
      return json(499, { error: { message: "client closed the request" } });
    }
    const headers = {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
    };
    if (answer.hang !== true) {
      return new Response(sse(dialect, EVENTS[dialect](answer, true)), {
        headers,
      });
    }
    const partial = sse(dialect, EVENTS[dialect](answer, false))
      .replace("data: [DONE]\n\n", "");
    const encoder = new TextEncoder();
    let held: ReadableStreamDefaultController<Uint8Array> | undefined;
    const release = () => {
      onAbort();
      try {
        held?.close();
      } catch {
        // Already closed by the client going away.
      }
    };
    return new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          held = controller;
          controller.enqueue(encoder.encode(partial));
        },
        cancel: release,
      }),
      { headers },
    );
  });
  return {
    baseURL: `${server.origin}/v1`,
    requests,
    stalled,
    aborted,
    close: server.close,
  };
};
