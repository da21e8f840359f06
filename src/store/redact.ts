/**
 * Hiding the secrets of a store address: the one place that decides which
 * parts of an address are secret. Every message, error field and output
 * that shows an address shows {@link redactAddress}'s result; the command
 * line also passes everything it writes through {@link secretRedactor}, so
 * that an address a lower layer echoed (a path that was a URL, a driver's
 * message) is hidden too.
 *
 * An address as typed need not be a well-formed URL: a password may hold an
 * unencoded `@`, `:`, `/`, `?` or `#`. The rules therefore read the text, not
 * a parsed URL, and hide too much rather than too little:
 *
 * - in a `scheme://` address, everything from the first `:` after `//` to
 *   the last `@` is the user info's password (for
 *   `postgres://u:p@ss@host/db` that is `p@ss`);
 * - a query parameter whose name (percent-decoded) contains `pass`, `pwd`,
 *   `secret` or `token` (`password`, `sslpassword`, ...) is secret up to the
 *   next `&name=` or the end.
 *
 * Text that is not a `scheme://` address (a file path) is never changed.
 *
 * @module
 */

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\//i;
const SECRET_NAME = /pass|pwd|secret|token/i;
const PARAM = /[?&]([^&=?]*)=/g;
const NEXT_PARAM = /&[^&=]*=/g;

/** What replaces a secret. */
const MASK = "***";

/** A secret's place in the text: `[start, end)`. */
type Span = readonly [number, number];

const decode = (text: string): string => {
  try {
    return decodeURIComponent(text.replaceAll("+", " "));
  } catch {
    return text;
  }
};

/**
 * Every place of an address that may be a secret: the user info's password
 * ends at one of the `@` after the first `:` (each is a candidate), and
 * each secret query parameter's value.
 */
const candidateSpans = (text: string): ReadonlyArray<Span> => {
  const scheme = SCHEME.exec(text);
  if (scheme === null) return [];
  const start = scheme[0].length;
  const spans: Span[] = [];
  const colon = text.indexOf(":", start);
  if (colon !== -1) {
    for (let at = text.indexOf("@", colon + 2); at !== -1;) {
      spans.push([colon + 1, at]);
      at = text.indexOf("@", at + 1);
    }
  }
  PARAM.lastIndex = start;
  for (let m = PARAM.exec(text); m !== null; m = PARAM.exec(text)) {
    const from = m.index + m[0].length;
    if (!SECRET_NAME.test(decode(m[1] ?? ""))) {
      PARAM.lastIndex = from;
      continue;
    }
    NEXT_PARAM.lastIndex = from;
    const next = NEXT_PARAM.exec(text);
    const to = next === null ? text.length : next.index;
    if (to > from) spans.push([from, to]);
    PARAM.lastIndex = to;
  }
  return spans;
};

/** The secret spans of an address, sorted and merged. */
const secretSpans = (text: string): ReadonlyArray<Span> => {
  const spans = [...candidateSpans(text)].sort((a, b) => a[0] - b[0]);
  const merged: Array<[number, number]> = [];
  for (const [from, to] of spans) {
    const last = merged[merged.length - 1];
    if (last !== undefined && from <= last[1]) last[1] = Math.max(last[1], to);
    else merged.push([from, to]);
  }
  return merged;
};

/** The first `n` characters of `text` with the secrets among them masked. */
const maskPrefix = (
  text: string,
  spans: ReadonlyArray<Span>,
  n: number,
): string => {
  let out = "";
  let at = 0;
  for (const [from, to] of spans) {
    if (from >= n) break;
    out += text.slice(at, from) + MASK;
    at = Math.min(to, n);
  }
  return out + text.slice(at, n);
};

/**
 * An address with its secrets replaced by `***`: the password of the user
 * info and the values of secret query parameters (`password`,
 * `sslpassword`, ...), whether percent-encoded or not. A file path comes
 * back unchanged.
 *
 * @param text An address as typed, or a connection URL.
 * @returns The text to show.
 *
 * @example Hiding a password wherever the address puts it
 * ```ts
 * import { redactAddress } from "@palimpsest/session/internal";
 * import assert from "node:assert/strict";
 *
 * assert.equal(redactAddress("postgres://u:p@ss@db/app?session=s"), "postgres://u:***@db/app?session=s");
 * assert.equal(redactAddress("postgres://u@db/app?password=x&session=s"), "postgres://u@db/app?password=***&session=s");
 * assert.equal(redactAddress("logs/chat.jsonl"), "logs/chat.jsonl");
 * ```
 */
export function redactAddress(text: string): string {
  return maskPrefix(text, secretSpans(text), text.length);
}

/** The forms a secret may take once a URL parser or JSON has had it. */
const secretForms = (raw: string): ReadonlyArray<string> => {
  const plain = decode(raw);
  const forms = new Set([raw, plain, encodeURIComponent(plain)]);
  forms.add(new URLSearchParams({ x: plain }).toString().slice(2));
  try {
    const url = new URL("postgres://host");
    url.password = plain;
    forms.add(url.password);
    url.username = plain;
    forms.add(url.username);
  } catch {
    // A form the URL parser refuses is never printed by it either.
  }
  for (const form of [...forms]) forms.add(JSON.stringify(form).slice(1, -1));
  return [...forms];
};

/**
 * Secrets shorter than this are hidden only where an address shows them: a
 * short one would also mask words of the session's own content.
 */
const MIN_SCATTERED = 8;

/**
 * A function that hides, in any text, the addresses among `inputs` and
 * their secrets: each address that holds a secret is replaced by its
 * {@link redactAddress} form (also where JSON quoted it, and where a
 * message cut it short), then each secret of at least 8 characters is
 * replaced by `***` wherever it appears, in every form a URL parser or JSON
 * writes it (raw, percent-decoded, percent-encoded, form-encoded).
 * The command line passes all its output through it.
 *
 * @param inputs The texts that may be addresses (the command's arguments).
 * @returns The redacting function; the identity when no input holds a secret.
 *
 * @example Hiding what a lower layer echoed
 * ```ts
 * import { secretRedactor } from "@palimpsest/session/internal";
 * import assert from "node:assert/strict";
 *
 * const redact = secretRedactor(["postgres://u:hunter2-x@db/app?session=s"]);
 * assert.equal(
 *   redact('Could not open "postgres://u:hunter2-x@db/app?session=s"; user u, password hunter2-x'),
 *   'Could not open "postgres://u:***@db/app?session=s"; user u, password ***',
 * );
 * ```
 */
export function secretRedactor(
  inputs: Iterable<string>,
): (text: string) => string {
  const addresses: Array<{ text: string; spans: ReadonlyArray<Span> }> = [];
  const secrets = new Set<string>();
  for (const input of inputs) {
    const spans = secretSpans(input);
    if (spans.length === 0) continue;
    for (const text of [input, JSON.stringify(input).slice(1, -1)]) {
      addresses.push({ text, spans: secretSpans(text) });
    }
    for (const [from, to] of candidateSpans(input)) {
      for (const form of secretForms(input.slice(from, to))) {
        if (form.length >= MIN_SCATTERED) secrets.add(form);
      }
    }
  }
  if (addresses.length === 0) return (text) => text;
  // Longer first, so that a secret holding another is replaced whole.
  const ordered = [...secrets].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const address of addresses) out = maskAddress(out, address);
    for (const secret of ordered) out = out.replaceAll(secret, MASK);
    return out;
  };
}

/**
 * Masks in `text` every copy of `address`, whole or cut short (a message
 * that shortens long values), once the copy reaches into a secret.
 */
const maskAddress = (
  text: string,
  address: { readonly text: string; readonly spans: ReadonlyArray<Span> },
): string => {
  const head = address.text.slice(0, address.spans[0]?.[0] ?? 0);
  let out = "";
  let done = 0;
  for (let i = text.indexOf(head); i !== -1; i = text.indexOf(head, done)) {
    let n = head.length;
    while (
      n < address.text.length && i + n < text.length &&
      text[i + n] === address.text[n]
    ) n++;
    if (n === head.length) {
      out += text.slice(done, i + n);
      done = i + n;
      continue;
    }
    out += text.slice(done, i) + maskPrefix(address.text, address.spans, n);
    done = i + n;
  }
  return out + text.slice(done);
};
