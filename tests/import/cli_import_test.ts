/**
 * `palimpsest import`: exit codes, the JSON report, no overwrite, and a
 * written log that `verify` accepts (an opencode export too).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { run, withDir } from "./_cli_run.ts";
import assert from "node:assert/strict";

const fixture = (name: string): string =>
  fileURLToPath(new URL(`../fixtures/import/${name}`, import.meta.url));

/** `import --from TOOL SOURCE --out OUT` with more flags. */
const importAs = (
  from: string,
  source: string,
  out: string,
  ...flags: string[]
) => run("import", "--from", from, source, "--out", out, ...flags);

/** `import --from pi FIXTURE --out OUT` with more flags. */
const importPi = (name: string, out: string, ...flags: string[]) =>
  importAs("pi", fixture(name), out, ...flags);

Deno.test("import writes a v3 log that verify accepts, and never overwrites it", () =>
  withDir("import-cli-", async (dir) => {
    const out = path.join(dir, "s.jsonl");
    const first = await importPi("pi/aborted-calls.jsonl", out, "--json");
    assert.equal(first.code, 0);
    const report = JSON.parse(first.out);
    assert.equal(report.ok, true);
    assert.equal(report.report.repairs, 2);
    assert.equal((await run("verify", out)).code, 0);
    const before = fs.readFileSync(out, "utf8");
    const again = await importPi("pi/aborted-calls.jsonl", out, "--json");
    assert.equal(again.code, 2);
    assert.equal(JSON.parse(again.out).error.tag, "TargetExists");
    assert.equal(fs.readFileSync(out, "utf8"), before);
  }));

Deno.test("import refuses a line that is not JSON with its line, unless --recover", () =>
  withDir("import-cli-", async (dir) => {
    const out = path.join(dir, "g.jsonl");
    const refused = await importPi("pi/glued-line.jsonl", out, "--json");
    assert.equal(refused.code, 1);
    assert.deepEqual(
      [JSON.parse(refused.out).error.tag, JSON.parse(refused.out).error.line],
      ["ImportLineNotJson", 3],
    );
    assert.equal(fs.existsSync(out), false);
    const recovered = await importPi("pi/glued-line.jsonl", out, "--recover");
    assert.equal(recovered.code, 0);
    assert.match(recovered.out, /line 3/);
  }));

Deno.test("import without --from or with an unknown tool is a usage error", async () => {
  assert.equal(
    (await run("import", fixture("pi/glued-line.jsonl"), "--out", "x")).code,
    2,
  );
  assert.equal(
    (await run(
      "import",
      "--from",
      "vim",
      fixture("pi/glued-line.jsonl"),
      "--out",
      "x",
    )).code,
    2,
  );
});

Deno.test("import of another tool's file is refused, naming the --from that reads it, and writes nothing", () =>
  withDir("import-cli-", async (dir) => {
    const out = path.join(dir, "c.jsonl");
    const rollout = fixture("codex/turns.jsonl");
    const text = await run(
      "import",
      "--from",
      "claude-code",
      rollout,
      "--out",
      out,
    );
    assert.equal(text.code, 1);
    assert.match(text.err, /ImportNotThisFormat/);
    assert.match(text.err, /^ {2}hint: use --from codex$/m);
    assert.equal(fs.existsSync(out), false);
    const json = await run(
      "import",
      "--from",
      "pi",
      rollout,
      "--out",
      out,
      "--json",
    );
    assert.equal(json.code, 1);
    assert.equal(JSON.parse(json.out).error.tag, "ImportNotThisFormat");
    // Without --from, the usage error names the tool the file looks like.
    const missing = await run("import", rollout, "--out", out);
    assert.equal(missing.code, 2);
    assert.match(missing.err, /looks like a codex session: pass --from codex/);
  }));

Deno.test("explain --line gives the events a source line became, and where they are", () =>
  withDir("import-cli-", async (dir) => {
    const out = path.join(dir, "s.jsonl");
    assert.equal((await importPi("pi/aborted-calls.jsonl", out)).code, 0);
    const user = await run("explain", out, "--line", "2", "--json");
    assert.equal(user.code, 0);
    const report = JSON.parse(user.out);
    assert.equal(report.from, "pi");
    assert.deepEqual(
      report.events.map((e: { type: string; onSurface: boolean }) => [
        e.type,
        e.onSurface,
      ]),
      [["turn/start", false], ["user/message", true]],
    );
    const text = await run("explain", out, "--line", "2");
    assert.match(text.out, /^pi line 2 became 2 events:$/m);
    assert.match(text.out, /user\/message .*run two tools \(on the surface\)/);
    // A line the import turned into nothing: the header.
    const header = await run("explain", out, "--line", "1", "--json");
    assert.deepEqual(JSON.parse(header.out).events, []);
    // Not an imported session, or both SEQ and --line: usage errors.
    const plain = path.join(dir, "plain.jsonl");
    fs.writeFileSync(
      plain,
      fs.readFileSync(out, "utf8").split("\n").filter((l) =>
        !l.includes('"import/lines"')
      ).join("\n"),
    );
    assert.equal((await run("explain", plain, "--line", "2")).code, 2);
    assert.equal((await run("explain", out, "3", "--line", "2")).code, 2);
    // explain FILE SEQ still works.
    assert.equal((await run("explain", out, "1")).code, 0);
  }));

Deno.test("import --from opencode reads an opencode export; verify accepts the log and explain maps its lines", () =>
  withDir("import-cli-", async (dir) => {
    const source = path.join(dir, "export.json");
    const doc = {
      info: { id: "ses_1", version: "1.1.34", time: { created: 1 } },
      messages: [
        {
          info: { id: "msg_1", role: "user", time: { created: 2 } },
          parts: [{ id: "prt_1", type: "text", text: "list" }],
        },
        {
          info: {
            id: "msg_2",
            role: "assistant",
            time: { created: 3 },
            providerID: "openai",
            modelID: "m",
            finish: "stop",
          },
          parts: [
            { id: "prt_2", type: "step-start" },
            {
              id: "prt_3",
              type: "tool",
              callID: "c1",
              tool: "ls",
              state: { status: "error", input: {}, error: "no such dir" },
            },
            { id: "prt_4", type: "step-start" },
            { id: "prt_5", type: "text", text: "it failed" },
          ],
        },
      ],
    };
    const text = JSON.stringify(doc, null, 2);
    fs.writeFileSync(source, text);
    const out = path.join(dir, "s.jsonl");
    const imported = await importAs("opencode", source, out);
    assert.equal(imported.code, 0);
    assert.match(imported.out, /^imported opencode \(format 1\.1\.34\)/);
    assert.match(imported.out, /part\/step-start x2/);
    assert.equal((await run("verify", out)).code, 0);
    const line = text.split("\n").findIndex((l) => l.includes('"prt_3"')) + 1;
    const explained = await run("explain", out, "--line", `${line}`, "--json");
    assert.equal(explained.code, 0);
    assert.deepEqual(
      JSON.parse(explained.out).events.map((e: { type: string }) => e.type),
      // The part holds the call (its step's message) and its result.
      ["step/start", "assistant/message", "tool/call", "tool/result"],
    );
  }));

Deno.test("import --from gemini-cli reads a session Gemini CLI 0.61 wrote; verify accepts the log, explain maps a rewritten answer to its last write, and a file without --from is pointed to it", () =>
  withDir("import-cli-", async (dir) => {
    const source = fixture("gemini-cli/real.jsonl");
    const out = path.join(dir, "s.jsonl");
    const imported = await importAs("gemini-cli", source, out, "--json");
    assert.equal(imported.code, 0);
    const report = JSON.parse(imported.out).report;
    assert.equal(report.from, "gemini-cli");
    assert.equal(report.kinds["message/gemini"], 4);
    // The earlier writes of a message are merged into its last one.
    assert.ok(
      report.skipped.some((s: { kind: string }) => s.kind === "rewritten"),
    );
    assert.equal((await run("verify", out)).code, 0);
    // Line 15 is the `$set` of the whole list the resumed run wrote: the
    // messages it holds are imported from it.
    const explained = await run("explain", out, "--line", "15", "--json");
    assert.equal(explained.code, 0);
    assert.ok(
      JSON.parse(explained.out).events.some((e: { type: string }) =>
        e.type === "assistant/message"
      ),
    );
    const unnamed = await run("import", source, "--out", `${out}.2`);
    assert.equal(unnamed.code, 2);
    assert.match(unnamed.err, /--from gemini-cli/);
  }));
