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

const DOCS = [
  ["README.md", 1],
  ["docs/model-integration.md", 2],
  ["docs/format.md", 1],
  ["docs/rewriting-history.md", 2],
] as const;

/** The file a block is written to: its document and line in the name. */
const blockFile = (dir: string, file: string, line: number): string =>
  path.join(dir, `${file.replaceAll(/[^A-Za-z0-9]/g, "_")}_${line}.ts`);

let written: Promise<string> | undefined;
/**
 * Every block of every document, written into one folder and type-checked
 * by one `deno check` (a check per block would check the library again for
 * each); the folder, once the check passed.
 */
const checkedBlocks = (): Promise<string> =>
  written ??= (async () => {
    // Inside the repository (in the excluded .tmp/) so the import map applies.
    fs.mkdirSync(path.join(root, ".tmp"), { recursive: true });
    const dir = fs.mkdtempSync(path.join(root, ".tmp", `readme-${Deno.pid}-`));
    const files = DOCS.flatMap(([file]) =>
      tsBlocks(file).map((block) => {
        const name = blockFile(dir, file, block.line);
        fs.writeFileSync(name, block.code);
        return name;
      })
    );
    await denoOk(["check", ...files], { cwd: root });
    return dir;
  })();

globalThis.addEventListener("unload", () => {
  const dir = path.join(root, ".tmp");
  for (const name of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    if (name.startsWith(`readme-${Deno.pid}-`)) {
      fs.rmSync(path.join(dir, name), { recursive: true, force: true });
    }
  }
});

/** Runs every ```ts block of `file`, type-checked first, one step each. */
const runBlocks = async (
  t: Deno.TestContext,
  file: string,
  atLeast: number,
): Promise<void> => {
  const blocks = tsBlocks(file);
  assert.ok(blocks.length >= atLeast, `${file} has its examples`);
  const dir = await checkedBlocks();
  for (const block of blocks) {
    await t.step(`${file} line ${block.line}`, async () => {
      await denoOk([
        "run",
        "--no-check",
        "-A",
        blockFile(dir, file, block.line),
      ], {
        cwd: root,
      });
    });
  }
};

for (const [file, atLeast] of DOCS) {
  Deno.test(`every ts example of ${file} type-checks and runs`, async (t) => {
    await runBlocks(t, file, atLeast);
  });
}
