/**
 * The portable bundle: a JSONL session (log and checkpoint) bundled, then
 * read into the memory store, and published in another JSONL folder where
 * it opens from the checkpoint it carried; a bundle whose log was changed
 * is refused.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { Effect } from "effect";
import {
  deriveMessages,
  Draft,
  layerMemoryStore,
  SessionStore,
} from "@palimpsest/session";
import {
  bundleFile,
  readBundle,
  unbundleToFolder,
  writeBundle,
} from "@palimpsest/session/jsonl";
import { recordingIo, runCli } from "@palimpsest/session/cli";
import { tempDir, useStore, withStore } from "../_helpers/store.ts";

const header = { id: "moved/1", createdAt: 0, isSeeded: false };

/** A JSONL session under `root` with a checkpoint; its derived texts. */
const stored = async (root: string): Promise<string[]> => {
  const session = await useStore(root, (store) =>
    Effect.gen(function* () {
      const writer = yield* store.create(header);
      yield* store.append(writer, [Draft.user("hi"), Draft.user("there")]);
      yield* store.checkpoint(writer);
      return (yield* store.append(writer, [Draft.user("again")])).session;
    }));
  return texts(deriveMessages(session.surface));
};

const texts = (messages: ReturnType<typeof deriveMessages>): string[] =>
  messages.flatMap((m) =>
    m.content.flatMap((b) => b.type === "text" ? [b.text] : [])
  );

/**
 * Runs `f` with a folder holding the stored session (its file and derived
 * texts) and an empty one; both removed afterwards.
 */
const withMove = async (
  f: (
    s: { root: string; other: string; file: string; before: string[] },
  ) => Promise<void>,
): Promise<void> => {
  const root = tempDir("bundle-from-");
  const other = tempDir("bundle-to-");
  try {
    const before = await stored(root);
    const file = path.join(
      root,
      fs.readdirSync(root).find((n) => n.endsWith(".jsonl")) ?? "",
    );
    await f({ root, other, file, before });
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(other, { recursive: true, force: true });
  }
};

/** The derived texts of the session as the JSONL store over `root` opens it. */
const openedIn = (root: string) =>
  withStore(
    root,
    Effect.gen(function* () {
      return yield* (yield* SessionStore).open(header.id);
    }),
  );

Deno.test("a bundle moves a JSONL session into the memory store", () =>
  withMove(async ({ root, file, before }) => {
    const bundle = await Effect.runPromise(bundleFile(file));
    assert.notEqual(bundle.manifest.checkpoint, null);
    assert.equal(bundle.manifest.metadata.events, 3);
    await Effect.runPromise(writeBundle(bundle, path.join(root, "s.bundle")));
    const back = await Effect.runPromise(
      readBundle(path.join(root, "s.bundle")),
    );
    const after = await Effect.runPromise(
      Effect.scoped(Effect.gen(function* () {
        const store = yield* SessionStore;
        yield* store.create(back.session);
        const opened = yield* store.open(header.id);
        return deriveMessages(opened.session.surface);
      })).pipe(Effect.provide(layerMemoryStore())),
    );
    assert.deepEqual(texts(after), before);
  }));

Deno.test("a bundle moves a JSONL session to another folder, where it opens from its checkpoint", () =>
  withMove(async ({ root, other, file, before }) => {
    const target = path.join(root, "s.bundle");
    await Effect.runPromise(
      Effect.andThen(bundleFile(file), (b) => writeBundle(b, target)),
    );
    const written = await Effect.runPromise(unbundleToFolder(target, other));
    assert.equal(
      fs.readFileSync(written.file, "utf8"),
      fs.readFileSync(file, "utf8"),
    );
    const opened = await openedIn(other);
    assert.notEqual(opened.report.checkpoint, undefined);
    assert.deepEqual(texts(deriveMessages(opened.session.surface)), before);
    // Never replaced: the same bundle again is refused.
    const again = await Effect.runPromise(
      Effect.flip(unbundleToFolder(target, other)),
    );
    assert.equal(again._tag, "TargetExists");
    // A changed log is not the one the manifest names.
    const changed = path.join(root, "changed.bundle");
    fs.writeFileSync(
      changed,
      fs.readFileSync(target, "utf8").replace('"there"', '"THERE"'),
    );
    const refused = await Effect.runPromise(Effect.flip(readBundle(changed)));
    assert.equal(refused._tag, "BundleInvalid");
  }));

Deno.test("palimpsest bundle and unbundle move a session file to another folder", () =>
  withMove(async ({ root, other, file, before }) => {
    const target = path.join(root, "s.bundle");
    const run = async (...args: string[]) => {
      const io = recordingIo();
      return { code: await runCli(args, io), out: io.out() };
    };
    const packed = await run("bundle", file, "--out", target, "--json");
    assert.equal(packed.code, 0, packed.out);
    assert.equal(JSON.parse(packed.out).checkpoint, true);
    assert.equal((await run("bundle", file, "--out", target)).code, 2);
    const unpacked = await run("unbundle", target, other, "--json");
    assert.equal(unpacked.code, 0, unpacked.out);
    const opened = await openedIn(other);
    assert.deepEqual(texts(deriveMessages(opened.session.surface)), before);
    assert.equal((await run("unbundle", target, other)).code, 2);
  }));
