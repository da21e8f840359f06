/**
 * A file in a fresh temp folder for the length of one callback, removed with
 * its folder afterwards (after the promise settles, for an async callback).
 *
 * @module
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { tempDir } from "./store.ts";

/**
 * Runs `f` with the path of `name` in a fresh temp folder, the file holding
 * `text` (or absent when `text` is undefined), then removes the folder.
 *
 * @param name The file's name in the folder.
 * @param text What the file holds; undefined leaves it absent.
 * @param f What runs with the file's path.
 * @returns What `f` returns.
 */
export function withTempFile<A>(
  name: string,
  text: string | undefined,
  f: (file: string) => Promise<A>,
): Promise<A>;
export function withTempFile<A>(
  name: string,
  text: string | undefined,
  f: (file: string) => A,
): A;
export function withTempFile(
  name: string,
  text: string | undefined,
  f: (file: string) => unknown,
): unknown {
  const dir = tempDir("palimpsest-file-");
  const remove = () => fs.rmSync(dir, { recursive: true, force: true });
  let result: unknown;
  try {
    const file = path.join(dir, name);
    if (text !== undefined) fs.writeFileSync(file, text);
    result = f(file);
  } catch (error) {
    remove();
    throw error;
  }
  if (result instanceof Promise) return result.finally(remove);
  remove();
  return result;
}
