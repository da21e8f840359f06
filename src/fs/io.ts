/**
 * Small file-system helpers shared by the reader and the store: the
 * conversion of thrown system errors to {@link FileIoError}.
 *
 * @module
 * @internal
 */
import { FileIoError } from "./errors.ts";

/** The `code` of a thrown system error (`ENOENT`, `EEXIST`, ...). */
export const errorCode = (error: unknown): string | undefined => {
  if (typeof error !== "object" || error === null || !("code" in error)) {
    return undefined;
  }
  return typeof error.code === "string" ? error.code : undefined;
};

/**
 * The `--allow-*` flag whose absence made Deno refuse a call (its
 * `NotCapable` error, `PermissionDenied` before Deno 2), or undefined when
 * the thrown value is no such refusal. Deno names the flag in the message;
 * the name of the permission is the fallback.
 */
export const missingPermission = (error: unknown): string | undefined => {
  if (!(error instanceof Error)) return undefined;
  if (error.name !== "NotCapable" && error.name !== "PermissionDenied") {
    return undefined;
  }
  const flag = /--allow-[a-z-]+/.exec(error.message)?.[0];
  if (flag !== undefined) return flag;
  const kind = /Requires (\w+) access/.exec(error.message)?.[1];
  return kind === undefined ? undefined : `--allow-${kind}`;
};

/** Wraps a thrown value as a {@link FileIoError}. */
export const ioError = (
  operation: string,
  path: string,
  cause: unknown,
): FileIoError => {
  const permission = missingPermission(cause);
  return new FileIoError({
    operation,
    path,
    code: errorCode(cause) ??
      (permission === undefined ? undefined : "NotCapable"),
    cause,
    ...(permission === undefined ? {} : { permission }),
  });
};
