/**
 * Publishing a file by temporary name, fsync and link: the target either
 * does not exist or holds the whole content, an existing target is refused
 * unless replacing was asked for, and no temporary name is left behind.
 */
import assert from "node:assert/strict";
import { Effect, Exit } from "effect";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  nodeAppendIo,
  publishNewFile,
  writeAll,
} from "../../src/fs/durable_file.ts";
import { thenFails } from "../_helpers/then.ts";

const folder = (): string =>
  fs.mkdtempSync(path.join(os.tmpdir(), "palimpsest-durable-"));

/**
 * A fresh folder with the target `a.txt` in it, holding `held` when given,
 * and a check that the folder holds the target alone, with `content`.
 */
const givenTarget = (held?: string) => {
  const dir = folder();
  const target = path.join(dir, "a.txt");
  if (held !== undefined) fs.writeFileSync(target, held);
  const onlyTargetHolds = (content: string): void => {
    assert.equal(fs.readFileSync(target, "utf8"), content);
    assert.deepEqual(fs.readdirSync(dir), ["a.txt"]);
  };
  return { dir, target, onlyTargetHolds };
};

const fillWith = (text: string) => (fd: number) =>
  Effect.sync(() => {
    writeAll(nodeAppendIo, fd, new TextEncoder().encode(text), 0);
    return text.length;
  });

Deno.test("publishNewFile()", async (t) => {
  await t.step(
    "given no target, when published, then it holds the content",
    () => {
      const { target, onlyTargetHolds } = givenTarget();
      const written = Effect.runSync(publishNewFile(target, fillWith("new")));
      assert.equal(written, 3);
      onlyTargetHolds("new");
    },
  );

  await t.step(
    "given an existing target, when published, then it fails with TargetExists and the target is untouched",
    () => {
      const { target, onlyTargetHolds } = givenTarget("old");
      const error = Effect.runSync(
        Effect.flip(publishNewFile(target, fillWith("new"))),
      );
      thenFails(error, "TargetExists", { path: target });
      onlyTargetHolds("old");
    },
  );

  await t.step(
    "given an existing target, when published with replace, then it holds the new content",
    () => {
      const { target, onlyTargetHolds } = givenTarget("old");
      Effect.runSync(
        publishNewFile(target, fillWith("new"), { replace: true }),
      );
      onlyTargetHolds("new");
    },
  );

  await t.step(
    "given a fill that fails, when published with or without replace, then the target keeps what it held and no temporary name stays",
    () => {
      for (const replace of [false, true]) {
        const { dir, target, onlyTargetHolds } = givenTarget("old");
        const other = path.join(dir, "b.txt");
        const failing = (fd: number) =>
          Effect.flatMap(fillWith("partial")(fd), () => Effect.fail("boom"));
        const exit = Effect.runSyncExit(
          publishNewFile(replace ? target : other, failing, { replace }),
        );
        assert.ok(Exit.isFailure(exit));
        onlyTargetHolds("old");
      }
    },
  );

  await t.step(
    "given a folder that does not exist, when published, then it fails with FileIoError at create",
    () => {
      const target = path.join(folder(), "missing", "a.txt");
      const error = Effect.runSync(
        Effect.flip(publishNewFile(target, fillWith("x"))),
      );
      thenFails(error, "FileIoError", { operation: "create", code: "ENOENT" });
    },
  );
});
