import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** The first ```ts block after a README heading. */
const blockAfter = (heading: string): string => {
  const readme = fs.readFileSync(path.join(root, "README.md"), "utf8");
  const at = readme.indexOf(`\n## ${heading}\n`);
  assert.ok(at >= 0, `README has no section ${heading}`);
  const start = readme.indexOf("```ts\n", at);
  const end = readme.indexOf("\n```", start + 6);
  return readme.slice(start + 6, end);
};

Deno.test("the README's Talking to a model example runs one turn", async () => {
  // Inside the repository (in the excluded .tmp/) so the import map applies.
  fs.mkdirSync(path.join(root, ".tmp"), { recursive: true });
  const dir = fs.mkdtempSync(path.join(root, ".tmp", "readme-"));
  try {
    const file = path.join(dir, "talking_to_a_model.ts");
    fs.writeFileSync(file, blockAfter("Talking to a model"));
    const output = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--check",
        "--allow-read",
        "--allow-write",
        "--allow-env",
        file,
      ],
      cwd: root,
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stderr = new TextDecoder().decode(output.stderr);
    assert.equal(output.code, 0, stderr);
    assert.equal(new TextDecoder().decode(output.stdout).trim(), "completed 2");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
