/**
 * The session header, line 1 of every JSONL log of every version:
 * `{"type":"session","version":N,"id":…,"createdAt":…,"isSeeded":…,"parentSession"?:…,"meta"?:{…}}`.
 *
 * The header did not change shape between versions, only its `version`. This module checks the
 * shape migrations rely on (the `id` seeds synthetic message ids) and passes `createdAt`,
 * `parentSession` and `meta` through untouched for the v3 reader to judge.
 *
 * @module
 */
import * as Result from "effect/Result";
import { HEADER_KEYS } from "../src/log/codec.ts";
import { InvalidLegacyHeader } from "./errors.ts";
import { isJsonObject, isSeq, type Json, type JsonObject } from "./json.ts";

/** A session header of any version. */
export interface SessionHeaderJson {
  /** Always `"session"`. */
  readonly type: "session";
  /** The format version of the file. */
  readonly version: number;
  /** The session id (seeds synthetic message ids). */
  readonly id: string;
  /** When the session was created, as the file spells it. */
  readonly createdAt: Json;
  /** Whether the log starts with events inherited from a parent. */
  readonly isSeeded: boolean;
  /** The parent session, for a fork. */
  readonly parentSession?: Json;
  /** Free metadata. */
  readonly meta?: JsonObject;
}

/**
 * Check a parsed header line of any version (not whether the version is supported).
 *
 * @param input The parsed first line.
 * @returns The header, or `InvalidLegacyHeader` naming the bad key.
 *
 * @example Reading a v1 header
 * ```ts
 * import { decodeHeader } from "@palimpsest/session/migrations";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * const header = decodeHeader({ type: "session", version: 1, id: "s", createdAt: 0, isSeeded: false });
 * assert.equal(Result.isSuccess(header) && header.success.version, 1);
 * ```
 */
export function decodeHeader(
  input: unknown,
): Result.Result<SessionHeaderJson, InvalidLegacyHeader> {
  const bad = (reason: string) =>
    Result.fail(new InvalidLegacyHeader({ line: 1, reason }));
  if (!isJsonObject(input)) return bad("header");
  for (const key of Object.keys(input)) {
    if (!HEADER_KEYS.has(key)) return bad(key);
  }
  if (input["type"] !== "session") return bad("type");
  const version = input["version"];
  if (!isSeq(version)) return bad("version");
  const id = input["id"];
  if (typeof id !== "string" || id.length === 0) return bad("id");
  const createdAt = input["createdAt"];
  if (createdAt === undefined) return bad("createdAt");
  const isSeeded = input["isSeeded"];
  if (typeof isSeeded !== "boolean") return bad("isSeeded");
  const parentSession = input["parentSession"];
  const meta = input["meta"];
  if (meta !== undefined && !isJsonObject(meta)) return bad("meta");
  return Result.succeed({
    type: "session",
    version,
    id,
    createdAt,
    isSeeded,
    ...(parentSession === undefined ? {} : { parentSession }),
    ...(meta === undefined ? {} : { meta }),
  });
}

/**
 * The same header at another version, as a JSON object in header key order.
 *
 * @param header The old header.
 * @param version The version to write.
 * @returns The header line's JSON object.
 *
 * @example Re-versioning a header
 * ```ts
 * import { headerJson } from "@palimpsest/session/migrations";
 * import assert from "node:assert/strict";
 *
 * const line = headerJson({ type: "session", version: 0, id: "s", createdAt: 0, isSeeded: false }, 3);
 * assert.equal(JSON.stringify(line), '{"type":"session","version":3,"id":"s","createdAt":0,"isSeeded":false}');
 * ```
 */
export function headerJson(
  header: SessionHeaderJson,
  version: number,
): JsonObject {
  const out: Record<string, Json> = {
    type: "session",
    version,
    id: header.id,
    createdAt: header.createdAt,
    isSeeded: header.isSeeded,
  };
  if (header.parentSession !== undefined) {
    out["parentSession"] = header.parentSession;
  }
  if (header.meta !== undefined) out["meta"] = header.meta;
  return out;
}
