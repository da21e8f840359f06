/** docs/api has one page per entry point, naming the entry point it covers. */
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
