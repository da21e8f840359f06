import assert from "node:assert/strict";
import { Effect } from "effect";
import { recordingIo, runCli } from "@palimpsest/session/cli";
import { runApp } from "../../cli/app.ts";
import type { ParsedArgs } from "../../cli/args.ts";
import type { Command } from "../../cli/outcome.ts";
import { cli, cliInProcess as run, fixture, json } from "./_cli.ts";

/** A command that reports what the parser gave it. */
const echo = (seen: ParsedArgs[]): Command => ({
  spec: {
    name: "migrate",
    summary: "echo",
    description: "Echoes its arguments.",
    positionals: [{ name: "FILE", summary: "a file" }],
    options: [
      { name: "out", kind: "string", value: "NEW", summary: "a value" },
      { name: "dry-run", kind: "boolean", summary: "a flag" },
    ],
  },
  run: (args) =>
    Effect.sync(() => {
      seen.push(args);
      return { code: 0, json: { ok: true }, text: "" };
    }),
});

const parse = async (...args: string[]) => {
  const seen: ParsedArgs[] = [];
  const io = recordingIo();
  const code = await Effect.runPromise(
    runApp([echo(seen)], ["migrate", ...args], io, "9.9.9"),
  );
  return { code, seen: seen[0], io };
};

Deno.test("arguments reach a command in any order, in every spelling", async (t) => {
  await t.step("positionals, flags and values in any order", async () => {
    const { code, seen } = await parse(
      "--json",
      "a.jsonl",
      "--out",
      "b.jsonl",
      "--dry-run",
    );
    assert.equal(code, 0);
    assert.deepEqual(seen?.positionals, ["a.jsonl"]);
    assert.deepEqual([...(seen?.flags ?? [])].sort(), ["dry-run", "json"]);
    assert.equal(seen?.values.get("out"), "b.jsonl");
  });

  await t.step("--name=value", async () => {
    const { seen } = await parse("a", "--out=b");
    assert.equal(seen?.values.get("out"), "b");
  });

  await t.step("everything after -- is a positional", async () => {
    const { code, seen } = await parse("--", "--json");
    assert.equal(code, 0);
    assert.deepEqual(seen?.positionals, ["--json"]);
  });

  await t.step("a negative number is a positional", async () => {
    const { seen } = await parse("-1");
    assert.deepEqual(seen?.positionals, ["-1"]);
  });

  await t.step("an absent flag is not set", async () => {
    const { seen } = await parse("a");
    assert.deepEqual([...(seen?.flags ?? [])], []);
    assert.equal(seen?.values.has("out"), false);
  });
});

Deno.test("what the usage does not allow exits 2 with a hint, and runs nothing", async () => {
  for (
    const argv of [
      [],
      ["a", "b"],
      ["a", "--frob"],
      ["a", "-x"],
      ["a", "--out"],
      ["a", "--out="],
    ]
  ) {
    const { code, seen, io } = await parse(...argv);
    assert.equal(code, 2, argv.join(" "));
    assert.equal(seen, undefined, argv.join(" "));
    assert.match(io.err(), /hint: run "palimpsest migrate --help"/);
  }
});

Deno.test("an unknown flag exits 2 with a hint, as text and as JSON", async () => {
  const text = await run("verify", fixture("valid.jsonl"), "--frob");
  assert.equal(text.code, 2);
  assert.equal(text.stdout, "");
  assert.match(text.stderr, /--frob/);
  assert.match(text.stderr, /hint: run "palimpsest verify --help"/);
  const doc = await run("verify", fixture("valid.jsonl"), "--frob", "--json");
  assert.equal(doc.code, 2);
  assert.equal(json(doc).error.tag, "UsageError");
  assert.match(String(json(doc).error.message), /--frob/);
});

Deno.test("an unknown command exits 2 with a hint", async () => {
  const r = await run("frob");
  assert.equal(r.code, 2);
  assert.match(r.stderr, /frob/);
  assert.match(r.stderr, /hint: run "palimpsest --help" for the commands/);
});

Deno.test("--version prints the package version, exit 0", async () => {
  const version: string = JSON.parse(
    Deno.readTextFileSync(new URL("../../deno.json", import.meta.url)),
  ).version;
  for (const flag of ["--version", "-v"]) {
    const io = recordingIo();
    assert.equal(await runCli([flag], io), 0);
    assert.equal(io.out(), `palimpsest v${version}\n`);
  }
});

Deno.test("completions prints a script naming every command, for each shell", async () => {
  for (const shell of ["bash", "zsh", "fish"]) {
    const io = recordingIo();
    assert.equal(await runCli(["completions", shell], io), 0, shell);
    const script = io.out();
    assert.match(script, /palimpsest/, shell);
    for (const name of ["verify", "derive", "stats", "explain", "migrate"]) {
      assert.match(script, new RegExp(name), `${shell}: ${name}`);
    }
    const flag = recordingIo();
    assert.equal(await runCli(["--completions", shell], flag), 0, shell);
    assert.equal(flag.out(), script, `${shell}: --completions`);
  }
  const bad = recordingIo();
  assert.equal(await runCli(["completions", "tcsh"], bad), 2);
});

Deno.test("the bash completion script is valid bash", async () => {
  const io = recordingIo();
  assert.equal(await runCli(["completions", "bash"], io), 0);
  const output = await new Deno.Command("bash", {
    args: ["-n"],
    stdin: "piped",
    stderr: "piped",
  }).spawn();
  const writer = output.stdin.getWriter();
  await writer.write(new TextEncoder().encode(io.out()));
  await writer.close();
  const status = await output.output();
  assert.equal(status.code, 0, new TextDecoder().decode(status.stderr));
});

Deno.test("help COMMAND prints the command's help; help of an unknown one exits 2", async () => {
  const r = await run("help", "verify");
  assert.equal(r.code, 0);
  assert.match(r.stdout, /USAGE\n {2}palimpsest verify /);
  assert.equal((await run("help", "frob")).code, 2);
});

Deno.test("the real CLI answers --version as a subprocess", async () => {
  const r = await cli("--version");
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^palimpsest v\d+\.\d+\.\d+\n$/);
});
