/**
 * The JSON Schema (draft 2020-12) of one v3 event line, so that programs in
 * other languages can validate logs.
 *
 * Data schemas are generated from the effect Schemas of the vocabulary; the
 * envelope rules that depend on the type (which keys a surface, assistant or
 * log-only event may carry) are spelled out per type. Relational rules (dense
 * seqs, replace endpoints on the surface, cited sources) and cross-field rules
 * (sources earlier than the event) are beyond JSON Schema and are not
 * expressed.
 *
 * @module
 */
import * as Schema from "effect/Schema";
import { SessionSeq } from "./seq.ts";
import { logOnlyDataSchemas, surfaceDataSchemas } from "./event.ts";

/** A JSON Schema document. */
export interface JsonSchemaDocument {
  /** The dialect. */
  readonly $schema: string;
  /** The document's id. */
  readonly $id: string;
  /** The title. */
  readonly title: string;
  /** Further keywords. */
  readonly [keyword: string]: unknown;
}

const generate = (schema: Schema.Top): unknown => {
  const document = Schema.toJsonSchemaDocument(schema);
  return Object.keys(document.definitions).length === 0
    ? document.schema
    : { ...document.schema, $defs: document.definitions };
};

/**
 * The JSON Schema of a v3 event line as it is stored on disk (including the
 * `[start, end]` run pairs of `sourceEventSeqs`).
 *
 * @returns A draft 2020-12 JSON Schema document.
 *
 * @example Listing the types the schema knows
 * ```ts
 * import { eventJsonSchema } from "@palimpsest/session/schema";
 * import assert from "node:assert/strict";
 *
 * const schema = eventJsonSchema();
 * assert.equal(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
 * ```
 */
export function eventJsonSchema(): JsonSchemaDocument {
  const seq = generate(SessionSeq);
  const time = generate(Schema.Int);
  const ref = (name: string) => ({ $ref: `#/$defs/${name}` });
  const sources = {
    type: "array",
    minItems: 1,
    uniqueItems: true,
    items: {
      anyOf: [
        ref("SessionSeq"),
        {
          type: "array",
          prefixItems: [ref("SessionSeq"), ref("SessionSeq")],
          minItems: 2,
          maxItems: 2,
          description: "a run of 3 or more consecutive seqs, on disk only",
        },
      ],
    },
  };
  const replaceOp = {
    type: "object",
    properties: {
      op: { const: "replace" },
      startSeq: ref("SessionSeq"),
      endSeq: ref("SessionSeq"),
    },
    required: ["op", "startSeq", "endSeq"],
    additionalProperties: false,
  };
  const rewindOp = {
    type: "object",
    properties: {
      op: { const: "rewind" },
      toSeq: ref("SessionSeq"),
    },
    required: ["op", "toSeq"],
    additionalProperties: false,
  };
  const surfaceOpOf = (type: string): string =>
    type === "system/message"
      ? "SystemSurfaceOp"
      : type === "user/message"
      ? "UserSurfaceOp"
      : "SurfaceOp";
  const branch = (
    type: string,
    data: unknown,
    metadata: "surface" | "assistant" | "log-only",
  ) => ({
    type: "object",
    properties: {
      type: { const: type },
      seq: ref("SessionSeq"),
      time: ref("Time"),
      data,
      ignorable: { const: true },
      ...(metadata === "log-only" ? {} : {
        surfaceOp: ref(surfaceOpOf(type)),
      }),
      ...(metadata === "surface" ? { sourceEventSeqs: ref("Sources") } : {}),
    },
    required: metadata === "log-only"
      ? ["type", "seq", "time", "data"]
      : ["type", "seq", "time", "data", "surfaceOp"],
    additionalProperties: false,
  });
  const known = [
    ...Object.keys(surfaceDataSchemas),
    ...Object.keys(logOnlyDataSchemas),
  ];
  const opaque = {
    description:
      "an event of a type outside the vocabulary: kept as read, never interpreted",
    type: "object",
    properties: {
      type: { type: "string", minLength: 1, not: { enum: known } },
      seq: ref("SessionSeq"),
      time: ref("Time"),
      data: {},
      ignorable: { const: true },
      surfaceOp: {},
      sourceEventSeqs: {},
    },
    required: ["type", "seq", "time", "data", "ignorable"],
    additionalProperties: false,
  };
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: "https://jsr.io/@palimpsest/session/event-v3.schema.json",
    title: "palimpsest v3 event line",
    oneOf: [
      ...Object.entries(surfaceDataSchemas).map(([type, schema]) =>
        branch(
          type,
          generate(schema),
          type === "assistant/message" ? "assistant" : "surface",
        )
      ),
      ...Object.entries(logOnlyDataSchemas).map(([type, schema]) =>
        branch(type, generate(schema), "log-only")
      ),
      opaque,
    ],
    $defs: {
      SessionSeq: seq,
      Time: time,
      // Written out: the replace object has exactly three keys, which the
      // generated schema (open to extra keys) would not say.
      SurfaceOp: { anyOf: [{ const: "append" }, replaceOp] },
      // Only a system prompt may go before the head.
      SystemSurfaceOp: {
        anyOf: [{ const: "append" }, { const: "prepend" }, replaceOp],
      },
      // Only a user message may carry a rewind.
      UserSurfaceOp: { anyOf: [{ const: "append" }, replaceOp, rewindOp] },
      Sources: sources,
    },
  };
}
