/**
 * Store addresses: where the command line finds a session. A PostgreSQL
 * session is named by the server's URL with the session id as a query
 * parameter, `postgres://user:password@host:port/database?session=ID`
 * (`postgresql://` too); anything else is a JSONL file path.
 *
 * @module
 */
import * as Data from "effect/Data";
import { quote } from "../core/quote.ts";
import { redactAddress } from "../store/redact.ts";

/** A session in PostgreSQL: the connection URL and the session id. */
export interface PostgresAddress {
  /** The store kind. */
  readonly kind: "postgres";
  /** The connection URL, without the `session` parameter. */
  readonly url: string;
  /** The session id. */
  readonly session: string;
}

/** A session in a JSONL file. */
export interface JsonlAddress {
  /** The store kind. */
  readonly kind: "jsonl";
  /** The file path. */
  readonly path: string;
}

/** Where a session is. */
export type SessionAddress = PostgresAddress | JsonlAddress;

/** Why an address that names PostgreSQL is refused. */
export type AddressProblem = "not-a-url" | "missing-session";

/** A `postgres://` address that is not usable. */
export class InvalidAddress extends Data.Error<{
  /** The address as given, with its secrets hidden ({@link redactAddress}). */
  readonly address: string;
  /** What is wrong. */
  readonly problem: AddressProblem;
}> {
  /** The tag. */
  readonly _tag: "InvalidAddress" = "InvalidAddress";
  /** A sentence for people. */
  override readonly message: string = this.problem === "not-a-url"
    ? `Expected ${
      quote(this.address)
    } to be a URL such as postgres://user@host:5432/db?session=ID`
    : `Expected ${quote(this.address)} to name a session with ?session=ID`;
}

const POSTGRES = /^postgres(ql)?:\/\//i;

/**
 * Reads a session address: a `postgres://…?session=ID` URL or a file path.
 *
 * @param text The address as typed.
 * @returns The address, or what is wrong with a `postgres://` one.
 *
 * @example A PostgreSQL address and a file
 * ```ts
 * import { parseSessionAddress } from "@palimpsest/session/postgres";
 * import assert from "node:assert/strict";
 *
 * assert.deepEqual(parseSessionAddress("postgres://u@db:5432/app?session=chat-1"), {
 *   kind: "postgres", url: "postgres://u@db:5432/app", session: "chat-1",
 * });
 * assert.deepEqual(parseSessionAddress("logs/chat.jsonl"), { kind: "jsonl", path: "logs/chat.jsonl" });
 * ```
 */
export function parseSessionAddress(
  text: string,
): SessionAddress | InvalidAddress {
  if (!POSTGRES.test(text)) return { kind: "jsonl", path: text };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return new InvalidAddress({
      address: redactAddress(text),
      problem: "not-a-url",
    });
  }
  const session = url.searchParams.get("session");
  if (session === null || session.length === 0) {
    return new InvalidAddress({
      address: redactAddress(text),
      problem: "missing-session",
    });
  }
  url.searchParams.delete("session");
  return { kind: "postgres", url: url.toString(), session };
}

/**
 * Whether a parsed address was refused.
 *
 * @param parsed What {@link parseSessionAddress} returned.
 * @returns True for an {@link InvalidAddress}.
 *
 * @example Telling a refusal apart
 * ```ts
 * import { isAddressError, parseSessionAddress } from "@palimpsest/session/postgres";
 * import assert from "node:assert/strict";
 *
 * assert.equal(isAddressError(parseSessionAddress("postgres://db/app")), true);
 * ```
 */
export function isAddressError(
  parsed: SessionAddress | InvalidAddress,
): parsed is InvalidAddress {
  return parsed instanceof InvalidAddress;
}
