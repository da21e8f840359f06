/**
 * `palimpsest export`: the file each tool resumes, written where the tool
 * looks for it under a home folder, never overwritten; the `--to` values
 * and help come from the exporters' list.
 */
import { exporters, importSession } from "@palimpsest/session/import";
import { deriveMessages } from "@palimpsest/session";
import { Effect } from "effect";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { run, withDir } from "./_cli_run.ts";
import assert from "node:assert/strict";

const fixture = (name: string): string =>
  fileURLToPath(new URL(`../fixtures/import/${name}`, import.meta.url));

Deno.test("export writes each tool's file under its home, which imports back, and never overwrites", () =>
  withDir("export-cli-", async (dir) => {
    const log = path.join(dir, "s.jsonl");
    assert.equal(
      (await run(
        "import",
        "--from",
        "pi",
        fixture("pi/aborted-calls.jsonl"),
        "--out",
        log,
      )).code,
      0,
    );
    const source = await Effect.runPromise(
      importSession(fixture("pi/aborted-calls.jsonl"), { from: "pi" }),
    );
    const calls = (messages: ReturnType<typeof deriveMessages>) =>
      messages.flatMap((m) =>
        m.content.flatMap((b) =>
          b.type === "tool-call"
            ? [b.id]
            : b.type === "tool-result"
            ? [b.toolCallId]
            : []
        )
      );
    for (const { name } of exporters) {
      const home = path.join(dir, name);
      fs.mkdirSync(home);
      const done = await run(
        "export",
        log,
        "--to",
        name,
        "--out",
        home,
        "--json",
      );
      assert.equal(done.code, 0, done.out);
      const report = JSON.parse(done.out);
      assert.ok(report.file.startsWith(home));
      assert.ok(fs.readFileSync(report.file, "utf8").includes(report.id));
      const again = await Effect.runPromise(
        importSession(report.file, { from: name }),
      );
      assert.deepEqual(
        calls(deriveMessages(again.session.surface)),
        calls(deriveMessages(source.session.surface)),
      );
      const bytes = fs.readFileSync(report.file, "utf8");
      const twice = await run(
        "export",
        log,
        "--to",
        name,
        "--out",
        report.file,
        "--json",
      );
      assert.equal(twice.code, 2);
      assert.equal(JSON.parse(twice.out).error.tag, "TargetExists");
      assert.equal(fs.readFileSync(report.file, "utf8"), bytes);
    }
  }));

Deno.test("export names the tools --to takes, from the exporters' list", () =>
  withDir("export-cli-", async (dir) => {
    const unknown = await run(
      "export",
      fixture("pi/aborted-calls.jsonl"),
      "--to",
      "opencode",
      "--out",
      path.join(dir, "x"),
    );
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /unknown tool "opencode"/);
    const help = await run("export", "--help");
    assert.equal(help.code, 0);
    for (const e of exporters) assert.ok(help.out.includes(e.resume));
  }));
