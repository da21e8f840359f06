/**
 * The password fuzz's parts: generated passwords, the address forms that
 * carry them, every CLI command that takes an address, and the check that
 * no form of a password appears in what was printed or written.
 *
 * @module
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { Cause, Effect } from "effect";
import fc from "fast-check";
import {
  isAddressError,
  loadPostgresSession,
  parseSessionAddress,
  savePostgresSession,
} from "@palimpsest/session/postgres";
import { type Session, Session as S } from "@palimpsest/session";
import { cliInProcess, fixture } from "./_cli.ts";
import { tempDir } from "../_helpers/store.ts";

/** Characters a password is made of: the URL's delimiters among them. */
const CHARS = [
  ..."@:/?#% ",
  ..."+=;,!$'()*[]\\\"",
  "é",
  "ß",
  "密",
  "码",
  "🔑",
  ..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
];

/**
 * A password of 8 to 24 characters with at least three letters or digits
 * (so that finding it in an output cannot be chance) and at least one
 * delimiter.
 */
export const password: fc.Arbitrary<string> = fc.array(
  fc.constantFrom(...CHARS),
  { minLength: 8, maxLength: 24 },
).map((chars) => chars.join("")).filter((p) =>
  (p.match(/[A-Za-z0-9]/g)?.length ?? 0) >= 3 && /[@:/?#% ]/.test(p)
);

/** How an address carries the password. */
export type Form =
  | "userinfo raw"
  | "userinfo encoded"
  | "query raw"
  | "query encoded first"
  | "sslpassword raw"
  | "userinfo raw, no session"
  | "upper-case scheme";

/** Every form. */
export const FORMS: ReadonlyArray<Form> = [
  "userinfo raw",
  "userinfo encoded",
  "query raw",
  "query encoded first",
  "sslpassword raw",
  "userinfo raw, no session",
  "upper-case scheme",
];

/** The forms a server can log in with (the password reaches it intact). */
export const WELL_FORMED: ReadonlyArray<Form> = [
  "userinfo encoded",
  "query encoded first",
];

/**
 * An address of session `session` at `host` (`host:port/db`) for `user`,
 * carrying `pw` in `form`. A raw query value keeps its `&` encoded, as a
 * query value that ends at `&` is another value.
 */
export const address = (
  form: Form,
  user: string,
  pw: string,
  host: string,
  session: string,
): string => {
  const enc = encodeURIComponent(pw);
  const rawQuery = pw.replaceAll("&", "%26");
  switch (form) {
    case "userinfo raw":
      return `postgres://${user}:${pw}@${host}?session=${session}`;
    case "userinfo encoded":
      return `postgres://${user}:${enc}@${host}?session=${session}`;
    case "query raw":
      return `postgres://${user}@${host}?session=${session}&password=${rawQuery}`;
    case "query encoded first":
      return `postgresql://${user}@${host}?password=${enc}&session=${session}`;
    case "sslpassword raw":
      return `postgres://${user}:${enc}@${host}?sslpassword=${rawQuery}&session=${session}`;
    case "userinfo raw, no session":
      return `postgres://${user}:${pw}@${host}`;
    case "upper-case scheme":
      return `POSTGRES://${user}:${pw}@${host}?session=${session}`;
  }
};

const decoded = (text: string): string | undefined => {
  try {
    return decodeURIComponent(text);
  } catch {
    return undefined;
  }
};

/**
 * Every form the password may take in an output: raw, percent-decoded,
 * percent-encoded, form-encoded, as a URL's user info encodes it, and each
 * of those as JSON escapes it.
 */
export const leakForms = (pw: string): ReadonlyArray<string> => {
  const forms = new Set([pw, encodeURIComponent(pw)]);
  const plain = decoded(pw);
  if (plain !== undefined && plain.length >= 6) forms.add(plain);
  forms.add(new URLSearchParams({ x: pw }).toString().slice(2));
  const url = new URL("postgres://host");
  url.password = pw;
  forms.add(url.password);
  for (const form of [...forms]) forms.add(JSON.stringify(form).slice(1, -1));
  return [...forms];
};

/** The counts of one fuzz run, for the closing note. */
export interface Counts {
  /** Addresses tried. */
  addresses: number;
  /** Outputs, messages and files checked. */
  outputs: number;
  /** Command runs that exited 0. */
  succeeded: number;
  /** Command runs. */
  runs: number;
}

/** The counts before a run. */
export const noCounts = (): Counts => ({
  addresses: 0,
  outputs: 0,
  succeeded: 0,
  runs: 0,
});

/** Asserts that no form of `pw` is in `text`. */
export const assertHidden = (
  counts: Counts,
  pw: string,
  text: string,
  what: string,
): void => {
  counts.outputs++;
  for (const form of leakForms(pw)) {
    assert.ok(
      !text.includes(form),
      `${what} shows the password ${JSON.stringify(pw)} as ${
        JSON.stringify(form)
      }:\n${text}`,
    );
  }
};

/** A one-event session file named `ID.jsonl` in a fresh folder. */
export const sessionFile = (): string => {
  const dir = tempDir();
  const file = path.join(dir, "valid.jsonl");
  fs.copyFileSync(fixture("valid.jsonl"), file);
  return file;
};

const empty: Session = S.make({ id: "s", createdAt: 0, isSeeded: false });

/**
 * The library's own errors for `addr`: `InvalidAddress` from parsing, or
 * the errors of loading and saving through the URL; checks their message,
 * their fields as JSON and the cause as `Cause.pretty` prints it.
 */
const checkLibraryErrors = async (
  counts: Counts,
  pw: string,
  addr: string,
): Promise<void> => {
  const parsed = parseSessionAddress(addr);
  const errors: unknown[] = [];
  if (isAddressError(parsed)) errors.push(parsed);
  else if (parsed.kind === "postgres") {
    for (
      const program of [
        Effect.asVoid(loadPostgresSession(parsed.url, "no-such-session")),
        savePostgresSession(parsed.url, empty),
      ] as ReadonlyArray<Effect.Effect<void, unknown>>
    ) {
      const exit = await Effect.runPromiseExit(program);
      if (exit._tag === "Failure") {
        errors.push(Cause.squash(exit.cause));
        assertHidden(counts, pw, Cause.pretty(exit.cause), `cause ${addr}`);
      }
    }
  }
  for (const error of errors) {
    const e = error as { message?: unknown };
    assertHidden(counts, pw, String(e.message), `message ${addr}`);
    assertHidden(counts, pw, JSON.stringify(error), `JSON ${addr}`);
  }
};

/**
 * Checks one address: runs every CLI command that takes one, as text and
 * as `--json`, in-process, on `addr` (with the session `file` to copy in),
 * and checks stdout, stderr and any file written; then the library's own
 * errors for it.
 */
export const checkAddress = async (
  counts: Counts,
  pw: string,
  addr: string,
  file: string,
): Promise<void> => {
  const dir = tempDir();
  // The copy into the address comes first, so that on a server the
  // reading commands find the session.
  const runs: ReadonlyArray<ReadonlyArray<string>> = [
    ["copy", file, addr],
    ["verify", addr],
    ["derive", addr],
    ["stats", addr],
    ["explain", addr, "1"],
    ["repair", addr, "--dry-run"],
    ["repair", addr],
    ["copy", addr, dir],
    ["view", addr, "--out", path.join(dir, "page.html")],
    ["migrate", addr, "--out", path.join(dir, "migrated.jsonl")],
    ["import", "--from", "pi", addr, "--out", path.join(dir, "i.jsonl")],
  ];
  for (const args of runs) {
    for (const json of [false, true]) {
      const run = await cliInProcess(...args, ...(json ? ["--json"] : []));
      counts.runs++;
      if (run.code === 0) counts.succeeded++;
      const what = `${args[0]}${json ? " --json" : ""} ${addr}`;
      assertHidden(counts, pw, run.stdout, `stdout of ${what}`);
      assertHidden(counts, pw, run.stderr, `stderr of ${what}`);
    }
  }
  for (const name of fs.readdirSync(dir, { recursive: true })) {
    const target = path.join(dir, String(name));
    if (!fs.statSync(target).isFile()) continue;
    assertHidden(
      counts,
      pw,
      fs.readFileSync(target, "utf8"),
      `${name} written from ${addr}`,
    );
  }
  await checkLibraryErrors(counts, pw, addr);
};
