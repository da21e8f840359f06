import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { denoOk } from "../_helpers/deno_run.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Every ```ts block of a markdown file, with the line it starts on. */
const tsBlocks = (
  file: string,
): ReadonlyArray<{ readonly line: number; readonly code: string }> => {
  const lines = fs.readFileSync(path.join(root, file), "utf8").split("\n");
  const blocks: Array<{ line: number; code: string }> = [];
  let start = -1;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? "";
    if (start < 0 && line === "```ts") start = i;
    else if (start >= 0 && line === "```") {
      blocks.push({
        line: start + 1,
        code: lines.slice(start + 1, i).join("\n"),
      });
      start = -1;
    }
  }
  return blocks;
};

/** Type-checks and runs every ```ts block of `file`, one step each. */
const runBlocks = async (
  t: Deno.TestContext,
  file: string,
  atLeast: number,
): Promise<void> => {
  const blocks = tsBlocks(file);
  assert.ok(blocks.length >= atLeast, `${file} has its examples`);
  // Inside the repository (in the excluded .tmp/) so the import map applies.
  fs.mkdirSync(path.join(root, ".tmp"), { recursive: true });
  const dir = fs.mkdtempSync(path.join(root, ".tmp", "readme-"));
  try {
    for (const block of blocks) {
      await t.step(`${file} line ${block.line}`, async () => {
        const file = path.join(dir, `block_${block.line}.ts`);
        fs.writeFileSync(file, block.code);
        await denoOk(["run", "--check", "-A", file], { cwd: root });
      });
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
};

Deno.test("every ts example of the README type-checks and runs", async (t) => {
  await runBlocks(t, "README.md", 1);
});

Deno.test("every ts example of docs/model-integration.md type-checks and runs", async (t) => {
  await runBlocks(t, "docs/model-integration.md", 2);
});

Deno.test("every ts example of docs/format.md type-checks and runs", async (t) => {
  await runBlocks(t, "docs/format.md", 1);
});

Deno.test("every ts example of docs/rewriting-history.md type-checks and runs", async (t) => {
  await runBlocks(t, "docs/rewriting-history.md", 2);
});
