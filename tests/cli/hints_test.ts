/**
 * Each failure's hint fits its kind: a location error says what to do
 * about the location, a refused login says to check the user and password,
 * a server that is not there says to check the host and port, a Deno
 * permission refusal names the flag, and only a broken format rule gets the
 * format's hint. And the `cli` task carries the permissions the commands
 * need, `--allow-net` for PostgreSQL addresses included.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  SessionAlreadyExists,
  SessionLocked,
  SessionNotFound,
} from "@palimpsest/session";
import { FileIoError } from "@palimpsest/session/import";
import { InvalidAddress } from "@palimpsest/session/postgres";
import { failureHint, failureKind } from "../../cli/failure.ts";
import {
  cliInProcess,
  cliTaskFlags,
  cliWith,
  fixture,
  root,
  type Run,
} from "./_cli.ts";
import { tempDir } from "../_helpers/store.ts";

const FORMAT_HINT = /rule of the format|fix or cut the log/;

/** The hint line of a text failure. */
const hintOf = (run: Run): string => {
  const line = run.stderr.split("\n").find((l) => l.startsWith("  hint: "));
  assert.ok(line !== undefined, run.stderr);
  return line.slice("  hint: ".length);
};

/** Nothing listens on port 1 of the loopback. */
const UNREACHABLE = "postgres://someone:n0t-the-pw@127.0.0.1:1/db?session=s";

Deno.test("a location error's hint says what to do about the location", async () => {
  const dir = tempDir();
  fs.copyFileSync(fixture("valid.jsonl"), path.join(dir, "valid.jsonl"));
  const missing = await cliInProcess("verify", path.join(dir, "absent.jsonl"));
  assert.equal(missing.code, 2);
  assert.match(hintOf(missing), /no such file or folder; check the path/);
  const address = await cliInProcess("verify", "postgres://u@db/app");
  assert.match(missing.stderr, /FileIoError/);
  assert.match(address.stderr, /InvalidAddress/);
  assert.match(
    hintOf(address),
    /postgres:\/\/user:password@host:port\/db\?session=ID/,
  );
  const name = await cliInProcess(
    "copy",
    path.join(dir, "valid.jsonl"),
    path.join(dir, "not-a-session.txt"),
  );
  assert.match(name.stderr, /CopyTargetName/);
  assert.match(hintOf(name), /folder or a session file name/);
  fs.mkdirSync(path.join(dir, "again"));
  assert.equal(
    (await cliInProcess(
      "copy",
      path.join(dir, "valid.jsonl"),
      path.join(dir, "again"),
    )).code,
    0,
  );
  const exists = await cliInProcess(
    "copy",
    path.join(dir, "valid.jsonl"),
    path.join(dir, "again"),
  );
  assert.match(exists.stderr, /SessionAlreadyExists/);
  assert.match(
    hintOf(exists),
    /already there .*choose another id or destination/,
  );
  for (const run of [missing, address, name, exists]) {
    assert.doesNotMatch(hintOf(run), FORMAT_HINT);
  }
  // The same mapping for the location errors no command above produced.
  const errors = [
    new SessionNotFound({ id: "s" }),
    new SessionAlreadyExists({ id: "s" }),
    new InvalidAddress({ address: "postgres://db", problem: "not-a-url" }),
    new FileIoError({
      path: "/x",
      operation: "open",
      code: "ENOENT",
      cause: undefined,
    }),
    { _tag: "CopyTargetName", message: "m" },
  ];
  for (const error of errors) {
    assert.equal(failureKind(error), "location", error._tag);
    assert.doesNotMatch(failureHint(error), FORMAT_HINT, error._tag);
  }
  assert.match(
    failureHint(errors[0]),
    /check the id, path or address, or create/,
  );
  assert.match(failureHint(errors[3]), /no such file or folder/);
});

Deno.test("a server that does not answer gets a hint about host and port", async () => {
  const run = await cliInProcess("verify", UNREACHABLE);
  assert.equal(run.code, 2);
  assert.match(run.stderr, /StorageError/);
  assert.match(hintOf(run), /no server answered: check the host and port/);
});

Deno.test("a Deno permission refusal is reported as one, naming the flag", async () => {
  const net = await cliWith(
    ["--allow-read", "--allow-env"],
    "verify",
    UNREACHABLE,
  );
  assert.equal(net.code, 2, net.stderr);
  assert.match(hintOf(net), /Deno refused a permission: run with --allow-net/);
  const read = await cliWith(
    ["--allow-env"],
    "verify",
    fixture("valid.jsonl"),
  );
  assert.equal(read.code, 2, read.stderr);
  assert.match(
    hintOf(read),
    /Deno refused a permission: run with --allow-read/,
  );
});

Deno.test("the cli task carries --allow-net: a PostgreSQL address gets past the permissions", async () => {
  const flags = cliTaskFlags();
  assert.ok(flags.includes("--allow-net"), flags.join(" "));
  const run = await cliWith(flags, "verify", UNREACHABLE);
  assert.equal(run.code, 2, run.stderr);
  assert.match(hintOf(run), /no server answered/);
  assert.doesNotMatch(run.stderr, /NotCapable|PermissionDenied|--allow-/);
  for (const doc of ["README.md", "docs/cli.md", "docs/postgres.md"]) {
    const text = fs.readFileSync(path.join(root, doc), "utf8");
    for (const line of text.split("\n")) {
      if (!/deno run .*cli\/main\.ts|deno run .*session\/cli/.test(line)) {
        continue;
      }
      assert.ok(
        line.includes("--allow-net") || / -A\b/.test(line),
        `${doc}: ${line}`,
      );
    }
  }
});

Deno.test("only a broken format rule gets the format's hint", async () => {
  const dir = tempDir();
  const lines = fs.readFileSync(fixture("valid.jsonl"), "utf8").split("\n");
  // An event citing a source that is not earlier than itself.
  const event = JSON.parse(lines[1] ?? "");
  lines[1] = JSON.stringify({ ...event, sourceEventSeqs: [event.seq] });
  fs.writeFileSync(path.join(dir, "bad.jsonl"), lines.join("\n"));
  const rule = await cliInProcess("verify", path.join(dir, "bad.jsonl"));
  assert.equal(rule.code, 1, rule.stderr);
  assert.equal(failureKind({ _tag: "ShadowedNodeNotCited" }), "format");
  // The rules of a prepended system prompt are rules of the format too.
  for (const tag of ["PrependNotSystemMessage", "SystemHeadExists"]) {
    assert.equal(failureKind({ _tag: tag }), "format", tag);
  }
  assert.match(
    hintOf(rule),
    /breaks the "[A-Za-z]+" rule of the format \(docs\/format\.md\)/,
  );
  const fold = await cliInProcess("verify", fixture("fold-error.jsonl"));
  assert.equal(fold.code, 1);
  assert.match(hintOf(fold), /events must be numbered densely/);
  assert.equal(
    failureKind({ _tag: "CorruptLine", inner: { _tag: "Anything" } }),
    "format",
  );
  for (
    const error of [
      new SessionLocked({ id: "s", pid: 1 }),
      { _tag: "SomethingElse", message: "m" },
      new Error("boom"),
    ]
  ) {
    assert.doesNotMatch(failureHint(error), FORMAT_HINT);
  }
});
