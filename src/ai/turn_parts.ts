/**
 * The turn loop's parts that need no loop state: the next turn's number,
 * usage sums, stream parts as stored chunks, the turn's end reason, and one
 * tool call run with the toolkit's handler (its arguments checked, typed
 * failures turned into data).
 *
 * @module
 * @internal
 */
import {
  INVALID_ARGUMENTS,
  TOOL_FAILED,
  TOOL_NOT_FOUND,
  type TurnUsage,
} from "./turn_types.ts";
import * as Duration from "effect/Duration";
import * as Effect from "effect/Effect";
import * as Schema from "effect/Schema";
import * as Stream from "effect/Stream";
import { AiError, Response, type Tool, type Toolkit } from "effect/ai";
import { SessionSeq } from "../core/seq.ts";
import type { ToolCallBlock, ToolResultContentBlock } from "../core/message.ts";
import type { TurnEndReason } from "../core/event.ts";
import { Session } from "../session/session.ts";
import { turnMarks } from "../session/prior.ts";
import { jsonText } from "../core/json.ts";
import type { SessionHandle } from "../store/store.ts";

export const nextTurn = (session: Session): number => {
  const last = turnMarks(session).lastTurn;
  return last === undefined ? 0 : last + 1;
};

export type UsageSums = { -readonly [K in keyof TurnUsage]: TurnUsage[K] };

/** Adds one request's reported usage to the sums. */
export const addUsage = (sums: UsageSums, usage: Response.Usage): void => {
  const add = (key: keyof TurnUsage, n: number | undefined): void => {
    if (n !== undefined) sums[key] = (sums[key] ?? 0) + n;
  };
  const { inputTokens, outputTokens } = usage;
  const input = inputTokens.total ??
    (inputTokens.uncached === undefined
      ? undefined
      : inputTokens.uncached + (inputTokens.cacheRead ?? 0));
  add("inputTokens", input);
  add("outputTokens", outputTokens.total);
  add(
    "totalTokens",
    input === undefined || outputTokens.total === undefined
      ? undefined
      : input + outputTokens.total,
  );
  add("cachedInputTokens", inputTokens.cacheRead);
  add("cacheWriteTokens", inputTokens.cacheWrite);
  add("reasoningTokens", outputTokens.reasoning);
};

export const seqOfNext = (handle: SessionHandle): SessionSeq =>
  SessionSeq.make(Session.nextSeq(handle.session));

const encodePart = Schema.encodeUnknownEffect(Response.StreamPart());

const jsonReplacer = (_key: string, value: unknown): unknown =>
  value instanceof Error ? { name: value.name, message: value.message } : value;

/**
 * A decoded stream part as the JSON the log keeps, with the length of that
 * JSON (what a partial batch's byte bound counts).
 */
export const chunkOf = (
  part: unknown,
): Effect.Effect<
  { readonly chunk: Response.StreamPartEncoded; readonly size: number }
> =>
  Effect.map(
    Effect.orDie(encodePart(part)),
    (encoded) => {
      const json = JSON.stringify(encoded, jsonReplacer);
      const chunk: Response.StreamPartEncoded = JSON.parse(json);
      return { chunk, size: json.length };
    },
  );

/** How long a request may go without a stream part by default. */
export const DEFAULT_IDLE_TIMEOUT: Duration.Duration = Duration.minutes(5);

/**
 * `stream` failing with a `NetworkError` (`TransportError`) when no part
 * comes for `idle` (the wait for the first one included), timed with the
 * `Clock`. The stream then ends like one cut by a connection reset: its
 * scope closes, which aborts the request.
 */
export const withIdleTimeout = <A, E, R>(
  stream: Stream.Stream<A, E, R>,
  idle: Duration.Input,
): Stream.Stream<A, E | AiError.AiError, R> =>
  Stream.timeoutOrElse(stream, {
    duration: idle,
    orElse: () =>
      Stream.fail(AiError.make({
        module: "Turn",
        method: "streamText",
        reason: new AiError.NetworkError({
          reason: "TransportError",
          method: "POST",
          url: "",
          description: `No stream part came for ${
            Duration.format(Duration.fromInputUnsafe(idle))
          }: the request was aborted`,
        }),
      })),
  });

/**
 * The turn's end reason for the finish reason of its last answer, whether
 * `effect/ai`'s or the AI SDK's (which name their reasons alike; the AI
 * SDK's `interrupted`, a stream that ended without the provider's end,
 * ends the turn `interrupted`).
 */
export const endReasonOf = (
  finish: Response.FinishReason | string | undefined,
): TurnEndReason["kind"] => {
  switch (finish) {
    case "length":
      return "max-tokens";
    case "content-filter":
      return "blocked";
    case "error":
      return "error";
    case "interrupted":
      return "interrupted";
    default:
      return "completed";
  }
};

/** The outcome of running one tool, as its result block says it. */
export interface ToolOutcome {
  readonly content: ReadonlyArray<ToolResultContentBlock>;
  readonly error?: { readonly name: string; readonly code: string };
}

const failed = (
  name: string,
  code: string,
  text: string,
): ToolOutcome => ({
  content: [{ type: "text", text }],
  error: { name, code },
});

const tagOf = (error: unknown): string => {
  if (typeof error !== "object" || error === null) return "Error";
  if ("reason" in error) {
    const reason = error.reason;
    if (typeof reason === "object" && reason !== null && "_tag" in reason) {
      return String(reason._tag);
    }
  }
  return "_tag" in error ? String(error._tag) : "Error";
};

const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : jsonText(error);

const parseArguments = (
  text: string,
): { ok: true; value: unknown } | { ok: false } => {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch {
    return { ok: false };
  }
};

/** Runs one call with the toolkit's handler; typed failures become data. */
export const executeTool = <Tools extends Record<string, Tool.Any>>(
  toolkit: Toolkit.WithHandler<Tools>,
  call: ToolCallBlock,
): Effect.Effect<
  ToolOutcome,
  never,
  Tool.HandlerServices<Tools[keyof Tools]>
> => {
  const name = call.name;
  if (!isToolName(toolkit.tools, name)) {
    return Effect.succeed(
      failed(
        "ToolNotFoundError",
        TOOL_NOT_FOUND,
        `No tool is named ${JSON.stringify(name)}`,
      ),
    );
  }
  const parsed = parseArguments(call.arguments);
  if (!parsed.ok || !isEncodedParameters(toolkit.tools, parsed.value)) {
    return Effect.succeed(
      failed(
        "ToolParameterValidationError",
        INVALID_ARGUMENTS,
        "The arguments are not valid JSON",
      ),
    );
  }
  return toolkit.handle(name, parsed.value, call.id).pipe(
    Effect.flatMap(Stream.runCollect),
    Effect.map((results): ToolOutcome => {
      let last: Tool.HandlerResult<Tools[keyof Tools]> | undefined;
      for (const result of results) if (!result.preliminary) last = result;
      if (last === undefined) return { content: [] };
      const text = jsonText(last.encodedResult);
      return last.isFailure
        ? failed(tagOf(last.result), codeOf(last.result), text)
        : { content: [{ type: "text", text }] };
    }),
    Effect.catch((error) =>
      Effect.succeed(failed(tagOf(error), codeOf(error), messageOf(error)))
    ),
  );
};

const codeOf = (error: unknown): string => {
  const tag = tagOf(error);
  if (tag === "ToolParameterValidationError") return INVALID_ARGUMENTS;
  if (tag === "ToolNotFoundError") return TOOL_NOT_FOUND;
  return TOOL_FAILED;
};

const isToolName = <Tools extends Record<string, Tool.Any>>(
  tools: Tools,
  name: string,
): name is Extract<keyof Tools, string> => Object.hasOwn(tools, name);

/**
 * Any JSON value may be handed to `Toolkit.handle`: it decodes the encoded
 * parameters with the tool's schema and fails with a
 * `ToolParameterValidationError` for what does not match.
 */
const isEncodedParameters = <Tools extends Record<string, Tool.Any>>(
  _tools: Tools,
  _value: unknown,
): _value is Tool.ParametersEncoded<Tools[keyof Tools]> => true;
