// The README's Node example, run as it is written: the ```js block of its
// "## Node" section (read from the installed package's README.md) saved as
// chat.mjs in the project that installed the package, run with node, and its
// log checked with `npx palimpsest verify`.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";

const require = createRequire(import.meta.url);
const readme = fs.readFileSync(
  path.join(path.dirname(require.resolve("@palimpsest/session/package.json")), "README.md"),
  "utf8",
);

test("the README's Node example runs and writes a log the bin verifies", () => {
  const section = readme.split(/^## /m).find((s) => s.startsWith("Node\n"));
  assert.ok(section, "the README has a ## Node section");
  const blocks = [...section.matchAll(/^```js\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  assert.equal(blocks.length, 1);
  const dir = fs.mkdtempSync(path.join(process.cwd(), ".readme-"));
  try {
    const file = path.join(dir, "chat.mjs");
    fs.writeFileSync(file, blocks[0]);
    const run = spawnSync(process.execPath, [file], { encoding: "utf8" });
    assert.equal(run.status, 0, run.stderr);
    const [printed, log] = run.stdout.trim().split("\n");
    assert.equal(printed, "[ 'user: Hello from Node' ]");
    assert.ok(fs.existsSync(path.join(path.dirname(log), "chat.html")));
    const verify = spawnSync("npx", ["--no", "--", "palimpsest", "verify", log], {
      encoding: "utf8",
    });
    assert.equal(verify.status, 0, verify.stderr);
    assert.match(verify.stdout, /valid: 3 events/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
