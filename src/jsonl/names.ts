/**
 * A session's file name in a JSONL store: `ID.jsonl`, the id encoded by
 * `encodeSessionId` (`src/store/ids.ts`, the rule every store shares) so
 * that no id leaves the store's folder.
 *
 * @module
 * @internal
 */
import { decodeSessionId } from "../store/ids.ts";

/** The extension of a session's file in a JSONL store. */
export const SESSION_FILE_EXTENSION = ".jsonl";

/**
 * The session id a store file name encodes (`ID.jsonl`, the id encoded by
 * {@link encodeSessionId}), or `undefined` for any other name.
 *
 * @param name A file name, without folders.
 * @returns The id, or `undefined`.
 * @internal
 */
export function sessionIdOfFileName(name: string): string | undefined {
  return name.endsWith(SESSION_FILE_EXTENSION)
    ? decodeSessionId(name.slice(0, -SESSION_FILE_EXTENSION.length))
    : undefined;
}
