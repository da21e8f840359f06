/**
 * docs/api has one page per entry point, naming the entry point it covers,
 * and every function a page shows with its arguments is one its entry point
 * exports (the names are those of tests/fixtures/entry_points/, which
 * tests/entry_points_test.ts checks against the code).
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

Deno.test("docs/api has a page for every entry point", () => {
  const config = JSON.parse(fs.readFileSync(`${ROOT}deno.json`, "utf8"));
  const entries = Object.keys(config.exports);
  assert.ok(entries.length >= 10);
  const index = fs.readFileSync(`${ROOT}docs/api/README.md`, "utf8");
  for (const entry of entries) {
    const page = entry === "." ? "root" : entry.slice(2);
    const file = `${ROOT}docs/api/${page}.md`;
    assert.ok(fs.existsSync(file), `docs/api/${page}.md is missing`);
    const heading = entry === "."
      ? "# `@palimpsest/session`"
      : `# \`@palimpsest/session/${page}\``;
    assert.ok(
      fs.readFileSync(file, "utf8").startsWith(heading),
      `docs/api/${page}.md starts with ${heading}`,
    );
    assert.ok(index.includes(`(${page}.md)`), `the index links ${page}.md`);
  }
});

Deno.test("the README's entry point table names every entry point", () => {
  const config = JSON.parse(fs.readFileSync(`${ROOT}deno.json`, "utf8"));
  const readme = fs.readFileSync(`${ROOT}README.md`, "utf8");
  const listed = [...readme.matchAll(/^\| `(@palimpsest\/session[a-z/-]*)`/gm)]
    .map((match) => match[1] ?? "");
  const entries = Object.keys(config.exports).map((entry: string) =>
    entry === "."
      ? "@palimpsest/session"
      : `@palimpsest/session/${entry.slice(2)}`
  );
  assert.deepEqual([...listed].sort(), [...entries].sort());
});

Deno.test("the README stays a user's entry: at most 15 KiB", () => {
  const size = fs.statSync(`${ROOT}README.md`).size;
  assert.ok(size <= 15 * 1024, `README.md is ${size} bytes`);
});

Deno.test("every function a docs/api page shows is exported by its entry point", () => {
  const config = JSON.parse(fs.readFileSync(`${ROOT}deno.json`, "utf8"));
  const stale: string[] = [];
  for (const entry of Object.keys(config.exports)) {
    const page = entry === "." ? "root" : entry.slice(2);
    const names = new Set(
      fs.readFileSync(`${ROOT}tests/fixtures/entry_points/${page}.txt`, "utf8")
        .split("\n")
        .filter((line) => line !== "" && !line.startsWith("#"))
        .map((line) => line.slice(0, line.indexOf(":"))),
    );
    const text = fs.readFileSync(`${ROOT}docs/api/${page}.md`, "utf8");
    // `name(...)` or `name<T>(...)` at the start of a code span; a method
    // (`store.open(...)`, `Session.append(...)`) starts with its owner.
    for (const match of text.matchAll(/`([A-Za-z_$][\w$]*)(?:<[^>`]*>)?\(/g)) {
      const name = match[1] ?? "";
      if (!names.has(name)) stale.push(`docs/api/${page}.md: ${name}`);
    }
  }
  assert.deepEqual(stale, []);
});
