/**
 * The one redaction of store addresses: each place an address may hold a
 * password, and the library errors that carry an address.
 */
import assert from "node:assert/strict";
import { Effect } from "effect";
import { redactAddress, secretRedactor } from "@palimpsest/session/internal";
import {
  InvalidAddress,
  loadPostgresSession,
  parseSessionAddress,
} from "@palimpsest/session/postgres";

Deno.test("redactAddress hides the password wherever the address puts it", () => {
  const cases: ReadonlyArray<readonly [string, string]> = [
    [
      "postgres://u:pw@db:5432/app?session=s",
      "postgres://u:***@db:5432/app?session=s",
    ],
    ["postgresql://u:pw@db/app", "postgresql://u:***@db/app"],
    ["postgres://u:p@ss@db/app?session=s", "postgres://u:***@db/app?session=s"],
    ["postgres://u:p%40ss@db/app", "postgres://u:***@db/app"],
    [
      "postgres://u:a/b?c#d:e@db/app?session=s",
      "postgres://u:***@db/app?session=s",
    ],
    [
      "postgres://u@db/app?password=pw&session=s",
      "postgres://u@db/app?password=***&session=s",
    ],
    [
      "postgres://u@db/app?session=s&password=p%26w",
      "postgres://u@db/app?session=s&password=***",
    ],
    [
      "postgres://u@db/app?session=s&password=a#b c",
      "postgres://u@db/app?session=s&password=***",
    ],
    [
      "postgres://u@db/app?sslpassword=k&session=s",
      "postgres://u@db/app?sslpassword=***&session=s",
    ],
    [
      "postgres://u@db/app?PassWord=k&session=s",
      "postgres://u@db/app?PassWord=***&session=s",
    ],
    [
      "postgres://u@db/app?pass%77ord=k&session=s",
      "postgres://u@db/app?pass%77ord=***&session=s",
    ],
    [
      "postgres://u:x@db/app?session=s&password=y",
      "postgres://u:***@db/app?session=s&password=***",
    ],
    [
      "postgres://u@db:5432/app?session=s",
      "postgres://u@db:5432/app?session=s",
    ],
    ["logs/a:b@c.jsonl", "logs/a:b@c.jsonl"],
    ["/tmp/s.jsonl", "/tmp/s.jsonl"],
  ];
  for (const [address, shown] of cases) {
    assert.equal(redactAddress(address), shown, address);
  }
});

Deno.test("secretRedactor hides an address and its password in any text", () => {
  const address = "postgres://u:s3cr@t pw@db/app?session=s";
  const redact = secretRedactor(["verify", address, "--json"]);
  assert.equal(
    redact(`error: ${address}`),
    `error: ${redactAddress(address)}`,
  );
  assert.equal(
    redact(JSON.stringify({ path: address })),
    JSON.stringify({ path: redactAddress(address) }),
  );
  for (
    const form of [
      "s3cr@t pw",
      "s3cr%40t%20pw",
      "s3cr%40t+pw",
    ]
  ) {
    assert.equal(redact(`password ${form}.`), "password ***.", form);
  }
  // A message that cut the address short, inside the password.
  const long = "postgres://u:pw-0123456789-abcdef@db/app?session=s";
  assert.equal(
    secretRedactor([long])(`Could not open "${long.slice(0, 20)}..."`),
    'Could not open "postgres://u:***..."',
  );
  assert.equal(secretRedactor(["verify", "a.jsonl"])("a.jsonl"), "a.jsonl");
});

Deno.test("InvalidAddress never holds the password, even with an unencoded @", () => {
  for (
    const text of [
      "postgres://u:p@ss-w0rd@db/app",
      "postgres://u:p@ss-w0rd@db/app?x=1",
      "postgres://u@db/app?password=p@ss-w0rd",
      "postgres://u:p@ss-w0rd@[::1/app?session=s",
    ]
  ) {
    const parsed = parseSessionAddress(text);
    assert.ok(parsed instanceof InvalidAddress, text);
    assert.ok(!parsed.address.includes("ss-w0rd"), parsed.address);
    assert.ok(!parsed.message.includes("ss-w0rd"), parsed.message);
  }
});

Deno.test("a StorageError's message never holds a ?password= of the URL", async () => {
  const error = await Effect.runPromise(Effect.flip(
    loadPostgresSession(
      "postgres://u@127.0.0.1:1/db?password=qu3ry-secret&sslpassword=k3y-secret",
      "s",
    ),
  ));
  assert.equal(error._tag, "StorageError");
  assert.ok(!error.message.includes("qu3ry-secret"), error.message);
  assert.ok(!error.message.includes("k3y-secret"), error.message);
  assert.match(error.message, /password=\*\*\*/);
});
