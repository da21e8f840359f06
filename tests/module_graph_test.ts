/**
 * The module graph: the layers of docs/architecture.md (each file in `src/`
 * and `migrations/` imports only the layers its row allows, by relative
 * path, never the package by name); what loading the package costs: the
 * library's modules import effect's modules one by one (`effect/Effect`,
 * `effect/Schema`, ...), never the `effect` barrel, which loads every module
 * of effect (about 6 MB more peak memory for any process that imports the
 * package); `./providers` never loads `effect/ai`; and the command line
 * loads the page module (which brings `effect/ai`) only when `view` runs
 * (about 16 MB more for every command).
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

Deno.test("the command line does not import the internal entry point", () => {
  // What the command line needs is either public or imported from its
  // module: ./internal may move between minor versions, the command line
  // ships with the package.
  const found = sources("cli").filter((file) =>
    allImports(file).some((specifier) =>
      specifier === "@palimpsest/session/internal" ||
      specifier.endsWith("src/internal.ts")
    )
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

Deno.test("no entry point loads an agent SDK at run time", () => {
  // The agent SDK adapters import the SDKs' types only: a user of any entry
  // point, theirs included, loads nothing of an SDK through this library.
  const agentSdk = (specifier: string) =>
    specifier.startsWith("@openai/agents") ||
    specifier.startsWith("@anthropic-ai/claude-agent-sdk");
  const config = JSON.parse(
    fs.readFileSync(path.join(ROOT, "deno.json"), "utf8"),
  );
  for (const target of Object.values(config.exports)) {
    if (typeof target !== "string") continue;
    assert.deepEqual([...runtimeGraph(target)].filter(agentSdk), [], target);
  }
});

/** A row of docs/architecture.md's layer table. */
interface Layer {
  readonly name: string;
  /** Exact files, and folders (ending in `/`). */
  readonly files: ReadonlyArray<string>;
  readonly mayImport: ReadonlySet<string>;
}

/** `src/{a,b}.ts` to `src/a.ts`, `src/b.ts`. */
const expandBraces = (pattern: string): ReadonlyArray<string> => {
  const match = /^(.*)\{([^}]*)\}(.*)$/.exec(pattern);
  if (match === null) return [pattern];
  const [, head = "", alternatives = "", tail = ""] = match;
  return alternatives.split(",").map((a) => `${head}${a.trim()}${tail}`);
};

/** The text of docs/architecture.md between `<!-- name:start -->` and its end. */
const architectureSection = (name: string): string => {
  const page = fs.readFileSync(
    path.join(ROOT, "docs/architecture.md"),
    "utf8",
  );
  const found = new RegExp(
    `<!-- ${name}:start -->([\\s\\S]*?)<!-- ${name}:end -->`,
  )
    .exec(page);
  assert.ok(found !== null, `docs/architecture.md has no ${name} section`);
  return found[1] ?? "";
};

/** The layer table, read from the page that documents it. */
const layers = (): ReadonlyArray<Layer> => {
  return architectureSection("layers").split("\n")
    .filter((line) => line.startsWith("|") && !/^\|\s*-/.test(line))
    .map((line) => line.split("|").slice(1, -1).map((cell) => cell.trim()))
    .filter(([name]) => name !== "layer")
    .map(([name = "", files = "", mayImport = ""]) => ({
      name,
      files: [...files.matchAll(/`([^`]+)`/g)].flatMap((m) =>
        expandBraces(m[1] ?? "")
      ),
      mayImport: new Set(
        mayImport.split(",").map((s) => s.trim()).filter((s) => s !== ""),
      ),
    }));
};

const layerOf = (
  table: ReadonlyArray<Layer>,
  file: string,
): Layer | undefined =>
  table.find((layer) =>
    layer.files.some((f) => f.endsWith("/") ? file.startsWith(f) : file === f)
  );

/** Every specifier a module names (types included), with its line. */
const allImports = (file: string): ReadonlyArray<string> =>
  [
    ...fs.readFileSync(path.join(ROOT, file), "utf8").matchAll(
      /^(?:import|export)\b[^;]*?\bfrom "([^"]+)";|\bimport\("([^"]+)"\)/gm,
    ),
  ].map((match) => match[1] ?? match[2] ?? "");

const library = (): ReadonlyArray<string> =>
  [
    "mod.ts",
    ...sources("src"),
    ...sources("migrations"),
  ].map((file) => file.split(path.sep).join("/"));

Deno.test("every library file belongs to a layer of docs/architecture.md", () => {
  const table = layers();
  assert.ok(table.length >= 10, table.map((l) => l.name).join(", "));
  const names = new Set(table.map((layer) => layer.name));
  for (const layer of table) {
    for (const other of layer.mayImport) {
      assert.ok(names.has(other), `${layer.name} may import unknown ${other}`);
    }
  }
  const orphans = library().filter((file) =>
    layerOf(table, file) === undefined
  );
  assert.deepEqual(orphans, []);
});

/** The paths the file layout of docs/architecture.md lists, one per line. */
const layout = (): ReadonlyArray<string> =>
  [...architectureSection("layout").matchAll(/^- `([^`]+)`$/gm)]
    .map((m) => m[1] ?? "");

Deno.test("the file layout of docs/architecture.md lists every file under src/, and only those", () => {
  const listed = layout();
  const actual = fs.readdirSync(path.join(ROOT, "src"), {
    recursive: true,
    encoding: "utf8",
  })
    .map((file) => path.join("src", file).split(path.sep).join("/"))
    .filter((file) => fs.statSync(path.join(ROOT, file)).isFile());
  const missing = actual.filter((file) => !listed.includes(file));
  const absent = listed.filter((file) => !actual.includes(file));
  const repeated = listed.filter((file, i) => listed.indexOf(file) !== i);
  assert.deepEqual({ missing, absent, repeated }, {
    missing: [],
    absent: [],
    repeated: [],
  });
});

Deno.test("each library file imports only what its layer may import, by relative path", () => {
  const table = layers();
  const found: string[] = [];
  for (const file of library()) {
    const own = layerOf(table, file);
    if (own === undefined) continue;
    for (const specifier of allImports(file)) {
      if (specifier.startsWith("@palimpsest/")) {
        found.push(`${file}: imports the package by name (${specifier})`);
        continue;
      }
      if (!specifier.startsWith(".")) continue;
      const target = path.posix.normalize(
        path.posix.join(path.posix.dirname(file), specifier),
      );
      if (target === "mod.ts" && file !== "mod.ts") {
        found.push(`${file}: imports the root mod.ts`);
        continue;
      }
      const layer = layerOf(table, target);
      if (layer === undefined) {
        found.push(`${file}: imports ${target}, which is in no layer`);
      } else if (layer !== own && !own.mayImport.has(layer.name)) {
        found.push(`${file} (${own.name}) imports ${target} (${layer.name})`);
      }
    }
  }
  assert.deepEqual(found, []);
});

Deno.test("the providers entry point does not load effect/ai", () => {
  const reached = [...runtimeGraph("src/providers/mod.ts")];
  assert.deepEqual(
    reached.filter((s) => s === "effect/ai" || s.startsWith("effect/ai/")),
    [],
  );
  // The engine's entry point does, so the check can see it.
  assert.ok(
    [...runtimeGraph("src/ai/mod.ts")].some((s) => s.startsWith("effect/ai")),
  );
});

Deno.test("tests/ mirrors src/ and no test imports from bench/", () => {
  const folders = (dir: string) =>
    fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  const tested = new Set(folders("tests"));
  assert.deepEqual(folders("src").filter((folder) => !tested.has(folder)), []);
  const fromBench = sources("tests").flatMap((file) =>
    allImports(file)
      .filter((specifier) =>
        specifier.startsWith(".") &&
        path.normalize(path.join(path.dirname(file), specifier))
          .startsWith(`bench${path.sep}`)
      )
      .map((specifier) => `${file}: ${specifier}`)
  );
  assert.deepEqual(fromBench, []);
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
