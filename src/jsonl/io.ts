/**
 * Small file-system helpers shared by the reader and the store: the
 * conversion of thrown system errors to {@link JsonlIoError}.
 *
 * @module
 * @internal
 */
import { JsonlIoError } from "./errors.ts";

/** The `code` of a thrown system error (`ENOENT`, `EEXIST`, ...). */
export const errorCode = (error: unknown): string | undefined => {
  if (typeof error !== "object" || error === null || !("code" in error)) {
    return undefined;
  }
  return typeof error.code === "string" ? error.code : undefined;
};

/** Wraps a thrown value as a {@link JsonlIoError}. */
export const ioError = (
  operation: string,
  path: string,
  cause: unknown,
): JsonlIoError =>
  new JsonlIoError({ operation, path, code: errorCode(cause), cause });
