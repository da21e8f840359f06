/**
 * What loading the package costs: the library's modules import effect's
 * modules one by one (`effect/Effect`, `effect/Schema`, ...), never the
 * `effect` barrel, which loads every module of effect (about 6 MB more peak
 * memory for any process that imports the package); and the command line
 * loads the page module (which brings the model-integration module and
 * `effect/ai`) only when `view` runs (about 16 MB more for every command).
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

const sources = (dir: string): ReadonlyArray<string> =>
  fs.readdirSync(path.join(ROOT, dir), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => path.join(dir, file));

/**
 * The specifiers a module imports statically at run time (at the start of a
 * line; `import type` is erased, so it does not count).
 */
const staticImports = (file: string): ReadonlyArray<string> =>
  [
    ...fs.readFileSync(path.join(ROOT, file), "utf8").matchAll(
      /^(?:import|export)(?! type )\b[^;]*?\bfrom "([^"]+)";/gms,
    ),
  ].map((match) => match[1] ?? "");

Deno.test("the library imports effect module by module, never the barrel", () => {
  const files = [
    "mod.ts",
    ...sources("src"),
    ...sources("migrations"),
    ...sources("cli"),
  ];
  assert.ok(files.length > 50);
  const barrel = files.filter((file) =>
    staticImports(file).some((specifier) => specifier === "effect")
  );
  assert.deepEqual(barrel, []);
});

Deno.test("the command line loads the page and model modules only when view runs", () => {
  const heavy = [
    "@palimpsest/session/view",
    "@palimpsest/session/ai",
    "@palimpsest/session/postgres",
  ];
  const found = sources("cli").flatMap((file) =>
    staticImports(file)
      .filter((specifier) => heavy.includes(specifier))
      .map((specifier) => `${file}: ${specifier}`)
  );
  assert.deepEqual(found, []);
});

/**
 * Every module a file loads at run time, following relative imports and the
 * package's own entry points, with the bare specifiers it reaches.
 */
const runtimeGraph = (entry: string): ReadonlySet<string> => {
  const config = JSON.parse(
    fs.readFileSync(path.join(ROOT, "deno.json"), "utf8"),
  );
  const ownEntries: Record<string, string> = {};
  for (const [name, target] of Object.entries(config.imports)) {
    if (typeof target === "string" && target.startsWith("./")) {
      ownEntries[name] = target;
    }
  }
  const seen = new Set<string>();
  const bare = new Set<string>();
  const visit = (file: string): void => {
    const normal = path.normalize(file);
    if (seen.has(normal)) return;
    seen.add(normal);
    for (const specifier of staticImports(normal)) {
      const own = ownEntries[specifier];
      if (own !== undefined) visit(own);
      else if (specifier.startsWith(".")) {
        visit(path.join(path.dirname(normal), specifier));
      } else bare.add(specifier);
    }
  };
  visit(entry);
  return bare;
};

Deno.test("only the ai-sdk entry point loads the AI SDK packages", () => {
  const aiSdk = (specifier: string) =>
    specifier === "ai" || specifier.startsWith("ai/") ||
    specifier.startsWith("@ai-sdk/");
  for (const entry of ["mod.ts", "src/ai/mod.ts"]) {
    assert.deepEqual([...runtimeGraph(entry)].filter(aiSdk), [], entry);
  }
  assert.ok([...runtimeGraph("src/ai_sdk/mod.ts")].some(aiSdk));
});

Deno.test("the testing entry point is exported and no other module loads it", () => {
  const config = JSON.parse(
    fs.readFileSync(path.join(ROOT, "deno.json"), "utf8"),
  );
  assert.equal(config.exports["./testing"], "./src/testing/mod.ts");
  assert.equal(
    config.imports["@palimpsest/session/testing"],
    "./src/testing/mod.ts",
  );
  const files = [
    "mod.ts",
    ...sources("src"),
    ...sources("migrations"),
    ...sources("cli"),
    "examples/agent_session.ts",
  ];
  const testing = sources("src/testing");
  assert.ok(testing.length > 0);
  const loaders = files.filter((file) =>
    !testing.includes(file) &&
    staticImports(file).some((specifier) =>
      specifier === "@palimpsest/session/testing" ||
      specifier.includes("testing/mod.ts")
    )
  );
  // Only the demo, which is a test program, uses the test model.
  assert.deepEqual(loaders, ["examples/agent_session.ts"]);
  // And it imports effect module by module like the rest.
  for (const file of testing) {
    assert.ok(!staticImports(file).includes("effect"), file);
  }
});
