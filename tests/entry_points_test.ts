/**
 * The names each entry point of deno.json exports, values and types, checked
 * against a committed snapshot in tests/fixtures/entry_points/ (one file per
 * entry point, named as its docs/api page). A change to the public API is
 * then a reviewed diff of those files, not a number to stay under.
 *
 * `UPDATE_SNAPSHOTS=1 deno test -A tests/entry_points_test.ts` rewrites them.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SNAPSHOTS = path.join(ROOT, "tests/fixtures/entry_points");
const UPDATE = Deno.env.get("UPDATE_SNAPSHOTS") === "1";
const COMMAND = "UPDATE_SNAPSHOTS=1 deno test -A tests/entry_points_test.ts";

/** `.` to `root`, `./ai-sdk` to `ai-sdk`: the name of its docs/api page. */
const pageOf = (entry: string): string =>
  entry === "." ? "root" : entry.slice(2);

interface DocSymbol {
  readonly name: string;
  readonly declarations: ReadonlyArray<{ readonly kind: string }>;
}

/** The kinds of declaration that also declare a value. */
const VALUE_KINDS = new Set([
  "class",
  "enum",
  "function",
  "namespace",
  "variable",
]);

/** Runs `deno doc` on one file: whether it succeeded, its stdout and stderr. */
const denoDoc = async (
  flag: "--json" | "--lint",
  file: string,
): Promise<{ success: boolean; stdout: string; stderr: string }> => {
  const { success, stdout, stderr } = await new Deno.Command(Deno.execPath(), {
    args: ["doc", flag, file],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const [out = "", err = ""] = [stdout, stderr].map((bytes) =>
    new TextDecoder().decode(bytes)
  );
  return { success, stdout: out, stderr: err };
};

/**
 * One line per exported name with its kinds (`function`, `interface`,
 * `variable`, ...), sorted: `deno doc` sees types as well as values, so an
 * interface that disappears shows up as much as a function. `deno doc` gives
 * the kinds of the declaration, so a class or a schema the entry point
 * exports with `export type` is marked `(type only)`, from the values the
 * module has when imported.
 */
const exportedNames = async (
  file: string,
): Promise<ReadonlyArray<string>> => {
  const values = new Set(
    Object.keys(await import(pathToFileURL(path.join(ROOT, file)).href)),
  );
  const out = await denoDoc("--json", file);
  assert.ok(out.success, out.stderr);
  const doc: { nodes: Record<string, { symbols?: ReadonlyArray<DocSymbol> }> } =
    JSON.parse(out.stdout);
  const nodes = Object.values(doc.nodes);
  assert.equal(nodes.length, 1, `deno doc ${file} documents one module`);
  return (nodes[0]?.symbols ?? [])
    .map((symbol) => {
      const kinds = [...new Set(symbol.declarations.map((d) => d.kind))].sort();
      const typeOnly = kinds.some((kind) => VALUE_KINDS.has(kind)) &&
        !values.has(symbol.name);
      return `${symbol.name}: ${kinds.join(", ")}${
        typeOnly ? " (type only)" : ""
      }`;
    })
    .sort((a, b) => a < b ? -1 : a > b ? 1 : 0);
};

const header = (entry: string): string =>
  `# Names exported by @palimpsest/session${
    entry === "." ? "" : entry.slice(1)
  }. Regenerate with ${COMMAND}`;

const render = (entry: string, names: ReadonlyArray<string>): string =>
  [header(entry), ...names, ""].join("\n");

const parse = (text: string): ReadonlyArray<string> =>
  text.split("\n").filter((line) => line !== "" && !line.startsWith("#"));

/** The lines only in `actual` (`+`) and only in `expected` (`-`). */
const difference = (
  expected: ReadonlyArray<string>,
  actual: ReadonlyArray<string>,
): ReadonlyArray<string> => {
  const before = new Set(expected);
  const after = new Set(actual);
  return [
    ...expected.filter((line) => !after.has(line)).map((line) => `- ${line}`),
    ...actual.filter((line) => !before.has(line)).map((line) => `+ ${line}`),
  ];
};

const config = JSON.parse(
  fs.readFileSync(path.join(ROOT, "deno.json"), "utf8"),
);
const entries: ReadonlyArray<[string, string]> = Object.entries(
  config.exports,
).flatMap(([entry, file]) => typeof file === "string" ? [[entry, file]] : []);

Deno.test("every entry point exports exactly the names of its snapshot", async () => {
  assert.ok(entries.length >= 10);
  const actual = await Promise.all(
    entries.map(async ([entry, file]) =>
      [entry, await exportedNames(file)] as const
    ),
  );
  if (UPDATE) {
    fs.mkdirSync(SNAPSHOTS, { recursive: true });
    for (const [entry, names] of actual) {
      fs.writeFileSync(
        path.join(SNAPSHOTS, `${pageOf(entry)}.txt`),
        render(entry, names),
      );
    }
  }
  const report: string[] = [];
  for (const [entry, names] of actual) {
    const file = path.join(SNAPSHOTS, `${pageOf(entry)}.txt`);
    const expected = fs.existsSync(file)
      ? parse(fs.readFileSync(file, "utf8"))
      : [];
    const lines = difference(expected, names);
    if (lines.length > 0) {
      report.push(
        `${entry} (tests/fixtures/entry_points/${pageOf(entry)}.txt):`,
      );
      report.push(...lines.map((line) => `  ${line}`));
    }
  }
  assert.ok(
    report.length === 0,
    `The exported names differ from their snapshot (- in the snapshot, + exported now):\n${
      report.join("\n")
    }\nIf the change is meant, run ${COMMAND} and commit the snapshot with it.`,
  );
});

Deno.test("every snapshot belongs to an entry point", () => {
  const pages = new Set(entries.map(([entry]) => `${pageOf(entry)}.txt`));
  const stale = fs.readdirSync(SNAPSHOTS).filter((file) => !pages.has(file));
  if (UPDATE) {
    for (const file of stale) fs.unlinkSync(path.join(SNAPSHOTS, file));
    return;
  }
  assert.deepEqual(stale, [], `remove them or run ${COMMAND}`);
});

/**
 * Types a public entry point may name without exporting them from one:
 * the implementer's contract, which a memory store exposes as `core`.
 */
const PUBLIC_THROUGH_INTERNAL: ReadonlySet<string> = new Set(["StoreCore"]);

/** The names the library's own modules declare with `export`. */
const declaredNames = (): ReadonlySet<string> => {
  const names = new Set<string>();
  for (const dir of ["src", "migrations", "cli"]) {
    const files = fs.readdirSync(path.join(ROOT, dir), {
      recursive: true,
      encoding: "utf8",
    }).filter((file) => file.endsWith(".ts"));
    for (const file of files) {
      const text = fs.readFileSync(path.join(ROOT, dir, file), "utf8");
      for (
        const match of text.matchAll(
          /^export (?:declare )?(?:abstract )?(?:interface|type|class|const|function) ([A-Za-z_$][\w$]*)/gm,
        )
      ) names.add(match[1] ?? "");
    }
  }
  return names;
};

Deno.test("every type an entry point's names use is exported by a public entry point", async () => {
  // `deno doc --lint` reports each type a public name refers to that its
  // entry point does not export (`private-type-ref`). Types of effect and the
  // other packages are theirs to export; a type of ours must be reachable
  // from an entry point other than ./internal, at best the same one (option
  // types beside their functions).
  const declared = declaredNames();
  const exported = new Set<string>();
  for (const [entry] of entries) {
    if (entry === "./internal") continue;
    const file = path.join(SNAPSHOTS, `${pageOf(entry)}.txt`);
    for (const line of parse(fs.readFileSync(file, "utf8"))) {
      exported.add(line.slice(0, line.indexOf(":")));
    }
  }
  const found = await Promise.all(
    entries.filter(([entry]) => entry !== "./internal").map(
      async ([entry, file]) => {
        const out = await denoDoc("--lint", file);
        const text = out.stdout + out.stderr;
        return [
          ...text.matchAll(
            /public type '([^']+)' references private type '([^']+)'/g,
          ),
        ].flatMap(([, user = "", type = ""]) =>
          declared.has(type) && !exported.has(type) &&
            !PUBLIC_THROUGH_INTERNAL.has(type)
            ? [`${entry}: ${user} uses ${type}`]
            : []
        );
      },
    ),
  );
  assert.deepEqual([...new Set(found.flat())], []);
});
