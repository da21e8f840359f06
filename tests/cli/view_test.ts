/**
 * `view FILE --out PAGE`: the page the library draws, written whole, for
 * any log the CLI reads (older formats migrated, other tools' files
 * imported); an existing page is refused unless `--force`.
 */
import { readSessionFile } from "@palimpsest/session/jsonl";
import { importSession } from "@palimpsest/session/import";
import { renderSessionHtml } from "@palimpsest/session/view";
import { Effect, Result } from "effect";
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { cliInProcess as run, fixture, root, tempDir } from "./_cli.ts";

/** Runs `view` on a fixture with `--out out` and the extra flags. */
const viewTo = (log: string, out: string, ...flags: string[]) =>
  run("view", fixture(log), "--out", out, ...flags);

const errorTag = (stdout: string): unknown => {
  const doc: unknown = JSON.parse(stdout);
  if (typeof doc !== "object" || doc === null || !("error" in doc)) {
    return undefined;
  }
  const error = doc.error;
  return typeof error === "object" && error !== null && "tag" in error
    ? error.tag
    : undefined;
};

Deno.test("view", async (t) => {
  await t.step("writes the page the library draws for the log", async () => {
    const out = path.join(tempDir(), "page.html");
    const r = await viewTo("valid.jsonl", out);
    assert.equal(r.code, 0, r.stderr);
    const log = await Effect.runPromise(
      readSessionFile(fixture("valid.jsonl")),
    );
    assert.equal(
      fs.readFileSync(out, "utf8"),
      Result.getOrThrow(
        renderSessionHtml(log.session, { version: log.version }),
      ),
    );
  });

  await t.step("migrates an older log in memory and says so", async () => {
    const out = path.join(tempDir(), "page.html");
    const r = await viewTo("v1.jsonl", out);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      fs.readFileSync(out, "utf8"),
      /<dt>format<\/dt><dd>v1 \(migrated in memory to v3\)/,
    );
  });

  await t.step("reports a torn tail on the page", async () => {
    const out = path.join(tempDir(), "page.html");
    const r = await viewTo("torn-tail.jsonl", out);
    assert.equal(r.code, 0, r.stderr);
    assert.match(fs.readFileSync(out, "utf8"), /ends in a torn line/);
  });

  await t.step(
    "imports another tool's session in memory with --from",
    async () => {
      const source = path.join(
        root,
        "tests",
        "fixtures",
        "import",
        "codex",
        "compacted.jsonl",
      );
      const out = path.join(tempDir(), "page.html");
      const r = await run("view", source, "--from", "codex", "--out", out);
      assert.equal(r.code, 0, r.stderr);
      const imported = await Effect.runPromise(
        importSession(source, { from: "codex" }),
      );
      assert.equal(
        fs.readFileSync(out, "utf8"),
        Result.getOrThrow(renderSessionHtml(imported.session)),
      );
    },
  );

  await t.step(
    "refuses an existing page, and replaces it with --force",
    async () => {
      const out = path.join(tempDir(), "page.html");
      fs.writeFileSync(out, "keep me");
      const refused = await viewTo("valid.jsonl", out, "--json");
      assert.equal(refused.code, 2);
      assert.equal(errorTag(refused.stdout), "TargetExists");
      assert.equal(fs.readFileSync(out, "utf8"), "keep me");
      // The text says what only this command offers.
      const told = await viewTo("valid.jsonl", out);
      assert.equal(told.code, 2);
      assert.match(told.stderr, /hint: .*--force to replace it/);
      const forced = await viewTo("valid.jsonl", out, "--force");
      assert.equal(forced.code, 0, forced.stderr);
      assert.match(fs.readFileSync(out, "utf8"), /^<!DOCTYPE html>/);
      assert.deepEqual(fs.readdirSync(path.dirname(out)), ["page.html"]);
    },
  );

  await t.step(
    "a log that does not load exits 1 and writes nothing",
    async () => {
      const dir = tempDir();
      const out = path.join(dir, "page.html");
      const r = await viewTo("corrupt-line.jsonl", out, "--json");
      assert.equal(r.code, 1);
      assert.equal(errorTag(r.stdout), "InvalidJson");
      assert.deepEqual(fs.readdirSync(dir), []);
    },
  );

  await t.step("without --out it is a usage error", async () => {
    const r = await run("view", fixture("valid.jsonl"), "--json");
    assert.equal(r.code, 2);
    assert.equal(errorTag(r.stdout), "UsageError");
  });
});
