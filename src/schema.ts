/**
 * `@palimpsest/session/schema`: the raw effect Schemas of the v3 format and
 * the functions that check values against them, for code that validates or
 * generates events itself (a decoder in another process, a test generator,
 * a schema export).
 *
 * - {@link SessionSeq}, the message and content-block schemas, the event data
 *   schemas of the vocabulary ({@link surfaceDataSchemas},
 *   {@link logOnlyDataSchemas}) and the envelope pieces.
 * - {@link decodeEvent} / {@link decodeEventResult} check one event's local
 *   rules; {@link encodeEvent} writes an event back to its JSON value.
 * - The error classes of those rules and of the fold's relational rules, one
 *   per rule ({@link EventDecodeError}, {@link SurfaceError}); a harness
 *   author matches them by `_tag` and needs only the unions, which
 *   `@palimpsest/session` exports.
 * - {@link eventJsonSchema}: the JSON Schema (draft 2020-12) of an event line.
 *
 * The types of the same names are also exported from `@palimpsest/session`,
 * which is all a harness author needs.
 *
 * @example Validating a message with its schema
 * ```ts
 * import { Message } from "@palimpsest/session/schema";
 * import { Schema } from "effect";
 * import assert from "node:assert/strict";
 *
 * const message = Schema.decodeUnknownSync(Message)({
 *   id: "u0", role: "user", content: [{ type: "text", text: "hi" }], source: { kind: "user" },
 * });
 * assert.equal(message.id, "u0");
 * ```
 *
 * @module
 */
export { isSessionSeq, seqInput, SessionSeq } from "./core/seq.ts";
export * from "./core/message.ts";
export * from "./core/event.ts";
export * from "./core/errors.ts";
export {
  EVENT_DECODE_ERROR_TAGS,
  SURFACE_ERROR_TAGS,
} from "./core/rule_tags.ts";
export {
  decodeEvent,
  decodeEventResult,
  type DecodeOptions,
  isOpaqueEvent,
  makeVocabulary,
  type Vocabulary,
} from "./core/decode.ts";
export { encodeEvent, type EncodeOptions } from "./core/encode.ts";
export { type HeldReadError, SessionHeader } from "./session/session.ts";
export {
  eventJsonSchema,
  type JsonSchemaDocument,
} from "./core/json_schema.ts";
