/**
 * A loopback Anthropic Messages server for Claude Code: `POST /v1/messages`
 * answered by the test's `answer` function (streamed as server-sent events,
 * or a JSON body), a held-open response for `"hang"`, `count_tokens` with a
 * count, anything else 404. Every request is kept.
 *
 * @module
 */
import { answerEvents } from "../ai_sdk/_loopback.ts";
import { type ScriptedAnswer, serveLocalHttp } from "../_helpers/local_http.ts";

/** What the server answers to one request. */
export type Reply = ScriptedAnswer | "hang";

/** A running server. */
export interface AnthropicServer {
  /** The base URL to give Claude Code (`ANTHROPIC_BASE_URL`). */
  readonly url: string;
  /** The `/v1/messages` request bodies, in order. */
  readonly requests: Array<Record<string, unknown>>;
  /** Resolves when a request was held open. */
  readonly held: Promise<void>;
  readonly close: () => Promise<void>;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Starts the server. */
export const serveAnthropic = (
  answer: (body: Record<string, unknown>) => Reply,
): AnthropicServer => {
  const requests: Array<Record<string, unknown>> = [];
  let onHeld = (): void => {};
  const held = new Promise<void>((resolve) => {
    onHeld = resolve;
  });
  const server = serveLocalHttp(async (request) => {
    const { pathname } = new URL(request.url);
    const raw = request.method === "POST" ? await request.text() : "";
    if (pathname === "/v1/messages/count_tokens") {
      return Response.json({ input_tokens: 100 });
    }
    if (pathname !== "/v1/messages" || raw === "") {
      return new Response("", { status: 404 });
    }
    const parsed: unknown = JSON.parse(raw);
    const body = isRecord(parsed) ? parsed : {};
    requests.push(body);
    const reply = answer(body);
    if (reply === "hang") {
      onHeld();
      return new Response(
        new ReadableStream({ start() {} }),
        { headers: { "content-type": "text/event-stream" } },
      );
    }
    const script = "text" in reply
      ? { text: reply.text }
      : { calls: [reply.call] };
    if (body["stream"] !== true) {
      return Response.json({
        id: "msg_plain",
        type: "message",
        role: "assistant",
        model: String(body["model"]),
        content: [{ type: "text", text: "text" in reply ? reply.text : "" }],
        stop_reason: "end_turn",
        stop_sequence: null,
        usage: { input_tokens: 10, output_tokens: 2 },
      });
    }
    return new Response(answerEvents("anthropic", script).join(""), {
      headers: { "content-type": "text/event-stream" },
    });
  });
  return {
    url: server.origin,
    requests,
    held,
    close: server.close,
  };
};

/** The text of a request's last message, its tool results included. */
export const lastMessageText = (body: Record<string, unknown>): string => {
  const messages = body["messages"];
  const last = Array.isArray(messages) ? messages.at(-1) : undefined;
  return JSON.stringify(isRecord(last) ? last["content"] : "");
};
