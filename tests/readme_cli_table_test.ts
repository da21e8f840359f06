/** The command table of docs/cli.md lists every command the CLI has. */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

Deno.test("the CLI table of docs/cli.md lists every command", () => {
  const commands = fs.readdirSync(`${ROOT}cli/commands`)
    .filter((file) => file.endsWith(".ts"))
    .map((file) => file.replace(/\.ts$/, ""))
    .sort();
  assert.ok(commands.length >= 10);
  const doc = fs.readFileSync(`${ROOT}docs/cli.md`, "utf8");
  const listed = [...doc.matchAll(/^\| `([a-z]+)[ `]/gm)]
    .map((match) => match[1] ?? "");
  for (const command of commands) {
    assert.ok(listed.includes(command), `${command} is missing`);
  }
});
