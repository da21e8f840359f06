/**
 * AI SDK failures as `effect/ai` errors ({@link toAiError}): the HTTP
 * status, the provider's error body and a context overflow read into the
 * `AiError` reason a turn loop can act on.
 *
 * @module
 */
import { AiError } from "effect/ai";
import { APICallError, LoadAPIKeyError } from "@ai-sdk/provider";
import { MODULE } from "./request.ts";

/* ----------------------------------------------------------------------- */
/* Errors                                                                   */
/* ----------------------------------------------------------------------- */

const OVERFLOW =
  /context.?(length|window)|too long|too many tokens|maximum (context|prompt)|token limit|exceeds the (context|max)|request_too_large|context_length_exceeded/i;

const textOf = (value: unknown): string | undefined => {
  if (typeof value === "string") return value;
  if (value instanceof Error) return value.message;
  if (typeof value !== "object" || value === null) return undefined;
  const text = JSON.stringify(value);
  return text === undefined ? undefined : text;
};

/** `{ type, code, message }` of a provider's error body, at any depth. */
const errorFields = (
  value: unknown,
): { type?: string; code?: string; message?: string } => {
  if (typeof value !== "object" || value === null) return {};
  const record: { [key: string]: unknown } = { ...value };
  const inner = record["error"];
  const nested = typeof inner === "object" && inner !== null
    ? errorFields(inner)
    : {};
  const str = (v: unknown) => (typeof v === "string" ? v : undefined);
  const type = nested.type ?? str(record["type"]);
  const code = nested.code ?? str(record["code"]);
  const message = nested.message ?? str(record["message"]);
  return {
    ...(type === undefined || type === "error" ? {} : { type }),
    ...(code === undefined ? {} : { code }),
    ...(message === undefined ? {} : { message }),
  };
};

const reasonOfFields = (
  fields: { type?: string; code?: string; message?: string },
  description: string,
): AiError.AiErrorReason | undefined => {
  const kind = `${fields.type ?? ""} ${fields.code ?? ""}`;
  if (OVERFLOW.test(`${kind} ${description}`)) {
    return new AiError.InvalidRequestError({
      ...(fields.code === undefined ? {} : { parameter: fields.code }),
      constraint: "context length",
      description,
    });
  }
  if (/overloaded|api_error|server_error|internal/i.test(kind)) {
    return new AiError.InternalProviderError({ description });
  }
  if (/rate_limit/i.test(kind)) return new AiError.RateLimitError({});
  if (/insufficient_quota|billing/i.test(kind)) {
    return new AiError.QuotaExhaustedError({});
  }
  if (/authentication|invalid_api_key/i.test(kind)) {
    return new AiError.AuthenticationError({ kind: "InvalidKey", description });
  }
  if (/permission/i.test(kind)) {
    return new AiError.AuthenticationError({
      kind: "InsufficientPermissions",
      description,
    });
  }
  if (/invalid_request|not_found|invalid/i.test(kind)) {
    return new AiError.InvalidRequestError({ description });
  }
  return undefined;
};

const reasonOf = (error: unknown): AiError.AiErrorReason => {
  if (AiError.isAiErrorReason(error)) return error;
  if (APICallError.isInstance(error)) {
    const body = error.responseBody;
    const fields = errorFields(error.data ?? parseJson(body));
    const description = fields.message ?? error.message;
    const status = error.statusCode;
    // No status, or a success whose body broke off (a connection reset
    // mid-stream): the transport failed, not the request.
    if (status === undefined || (status >= 200 && status < 300)) {
      return new AiError.NetworkError({
        reason: "TransportError",
        method: "POST",
        url: error.url,
        description: error.message,
      });
    }
    const http = {
      response: { status, headers: { ...error.responseHeaders } },
      ...(body === undefined ? {} : { body }),
    };
    if (
      OVERFLOW.test(
        `${fields.type ?? ""} ${fields.code ?? ""} ${description}`,
      ) || status === 413
    ) {
      return new AiError.InvalidRequestError({
        ...(fields.code === undefined ? {} : { parameter: fields.code }),
        constraint: "context length",
        description,
        http,
      });
    }
    if (status === 529) {
      return new AiError.InternalProviderError({ description, http });
    }
    return AiError.reasonFromHttpStatus({ status, description, http });
  }
  if (LoadAPIKeyError.isInstance(error)) {
    return new AiError.AuthenticationError({
      kind: "MissingKey",
      description: error.message,
    });
  }
  if (error instanceof TypeError) {
    // What `fetch` throws when no response came (refused, reset, DNS).
    return new AiError.NetworkError({
      reason: "TransportError",
      method: "POST",
      url: "",
      description: error.message,
    });
  }
  const description = textOf(error) ?? "Unknown error";
  const fields = errorFields(error);
  const fromFields = reasonOfFields(fields, fields.message ?? description);
  if (fromFields !== undefined) return fromFields;
  if (error instanceof Error) {
    return new AiError.InvalidResponseError({ description });
  }
  return new AiError.UnknownError({ description });
};

const parseJson = (text: string | undefined): unknown => {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};

/**
 * An error of an AI SDK provider as an `effect/ai` `AiError`: an HTTP
 * error by its status (400 invalid request, 401/403 authentication, 429
 * rate limit, 5xx and Anthropic's 529 provider errors), keeping the status
 * and the response headers (`retry-after`) in the reason's
 * `http.response` for the retry policy, a failure with no status, a
 * successful response whose body broke off (a connection reset mid-stream)
 * or a `TypeError` from `fetch` as a network error, a missing key as an authentication error, and
 * an `error` part of a stream by the provider's error type. A refusal for
 * the request's length (OpenAI's `context_length_exceeded`, Anthropic's
 * "prompt is too long", a 413) is an `InvalidRequestError` with constraint
 * `context length`, which `isContextOverflow` recognises.
 *
 * @param error What the AI SDK threw or streamed.
 * @param method The `effect/ai` method (`streamText` or `generateText`).
 * @returns The `AiError`.
 *
 * @example A context-overflow refusal
 * ```ts
 * import { toAiError } from "@palimpsest/session/ai-sdk";
 * import { isContextOverflow } from "@palimpsest/session/ai";
 * import { APICallError } from "@ai-sdk/provider";
 * import assert from "node:assert/strict";
 *
 * const error = toAiError(new APICallError({
 *   message: "prompt is too long: 210000 tokens > 200000 maximum",
 *   url: "https://api.anthropic.com/v1/messages", requestBodyValues: {}, statusCode: 400,
 * }), "streamText");
 * assert.equal(error.reason._tag, "InvalidRequestError");
 * assert.equal(isContextOverflow(error), true);
 * ```
 */
export function toAiError(error: unknown, method: string): AiError.AiError {
  if (AiError.isAiError(error)) return error;
  return AiError.make({ module: MODULE, method, reason: reasonOf(error) });
}

/**
 * The failure of a stream that ended without the provider's end (the AI
 * SDK's finish reason `interrupted`, or no finish at all): a
 * `NetworkError` (`TransportError`, retryable), as for a connection reset
 * mid-answer.
 *
 * @param method The `effect/ai` method.
 * @returns The `AiError`.
 * @internal
 */
export function streamCut(method: string): AiError.AiError {
  return AiError.make({
    module: MODULE,
    method,
    reason: new AiError.NetworkError({
      reason: "TransportError",
      method: "POST",
      url: "",
      description: "The stream ended before the provider's end of the answer",
    }),
  });
}
