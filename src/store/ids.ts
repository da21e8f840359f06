/**
 * Session ids as file names: a reversible encoding that no id can use to
 * leave the store's folder.
 *
 * Lower-case ASCII letters, digits, `-` and `_` stand for themselves; every
 * other UTF-8 byte is written `%XX` with upper-case hex. So `..`, `/`, `\`,
 * NUL, upper-case letters and any Unicode become plain characters of one
 * file name, and two ids never share a name even on a case-insensitive file
 * system. The encoding is strict: a name that is not exactly the encoding of
 * some id decodes to nothing. An empty id, an id with lone surrogates, and
 * an id whose name would pass 200 bytes are refused. The encoding is the
 * rule every store applies to ids ({@link checkSessionId}), so a session
 * moves between stores under the same id; the JSONL store's file names are
 * `src/jsonl/names.ts`.
 *
 * @module
 */
import * as Result from "effect/Result";
import { InvalidSessionId } from "./errors.ts";

const MAX_NAME_BYTES = 200;
// With the u flag a surrogate pair is one code point, so only lone halves match.
const LONE_SURROGATE = /\p{Cs}/u;
const HEX = "0123456789ABCDEF";
const encoder = new TextEncoder();
const strictDecoder = new TextDecoder("utf-8", { fatal: true });

const isPlain = (byte: number): boolean =>
  (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39) ||
  byte === 0x2d || byte === 0x5f;

/**
 * Encodes a session id as a file-name stem (without the `.jsonl`
 * extension).
 *
 * @param id The session id.
 * @returns The stem, or `InvalidSessionId` (`empty`, `not-well-formed`,
 * `too-long`).
 *
 * @example Ids that try to escape stay inside
 * ```ts
 * import { encodeSessionId } from "@palimpsest/session/jsonl";
 * import { Result } from "effect";
 * import assert from "node:assert/strict";
 *
 * assert.equal(Result.getOrThrow(encodeSessionId("../etc/passwd")), "%2E%2E%2Fetc%2Fpasswd");
 * assert.equal(Result.getOrThrow(encodeSessionId("chat-1")), "chat-1");
 * ```
 */
export function encodeSessionId(
  id: string,
): Result.Result<string, InvalidSessionId> {
  if (id.length === 0) {
    return Result.fail(new InvalidSessionId({ id, problem: "empty" }));
  }
  if (LONE_SURROGATE.test(id)) {
    return Result.fail(
      new InvalidSessionId({ id, problem: "not-well-formed" }),
    );
  }
  let out = "";
  for (const byte of encoder.encode(id)) {
    out += isPlain(byte)
      ? String.fromCharCode(byte)
      : `%${HEX[byte >> 4]}${HEX[byte & 15]}`;
    if (out.length > MAX_NAME_BYTES) {
      return Result.fail(new InvalidSessionId({ id, problem: "too-long" }));
    }
  }
  return Result.succeed(out);
}

/**
 * Decodes a file-name stem back to its session id.
 *
 * @param stem A stem made by {@link encodeSessionId}.
 * @returns The id, or undefined when the stem is not exactly an encoding.
 *
 * @example Reversing the encoding
 * ```ts
 * import { decodeSessionId } from "@palimpsest/session/jsonl";
 * import assert from "node:assert/strict";
 *
 * assert.equal(decodeSessionId("%C3%A9t%C3%A9"), "été");
 * assert.equal(decodeSessionId("%c3%a9"), undefined);
 * ```
 */
export function decodeSessionId(stem: string): string | undefined {
  if (stem.length === 0 || stem.length > MAX_NAME_BYTES) return undefined;
  const bytes: number[] = [];
  for (let i = 0; i < stem.length; i++) {
    const code = stem.charCodeAt(i);
    if (code === 0x25) {
      const hi = i + 2 < stem.length ? HEX.indexOf(stem.charAt(i + 1)) : -1;
      const lo = i + 2 < stem.length ? HEX.indexOf(stem.charAt(i + 2)) : -1;
      if (hi < 0 || lo < 0) return undefined;
      const byte = hi * 16 + lo;
      if (isPlain(byte)) return undefined;
      bytes.push(byte);
      i += 2;
    } else if (isPlain(code)) {
      bytes.push(code);
    } else {
      return undefined;
    }
  }
  try {
    return strictDecoder.decode(new Uint8Array(bytes));
  } catch {
    return undefined;
  }
}

/**
 * The id itself when every store accepts it (the JSONL store can name its
 * file), else why not; what the stores that keep no files check.
 *
 * @param id The session id.
 * @returns The id, or `InvalidSessionId`.
 * @internal
 */
export function checkSessionId(
  id: string,
): Result.Result<string, InvalidSessionId> {
  return Result.map(encodeSessionId(id), () => id);
}
