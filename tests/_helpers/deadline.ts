/**
 * A bound on a broken run: waiting for a promise that should settle, failing
 * (instead of hanging the suite) once the bound is past. Not a timing
 * assertion: the bounds are far above what a working run takes.
 *
 * @module
 */

/**
 * Waits for `promise`, failing with the message `failure` if it has not settled
 * after `ms` milliseconds. The promise is left behind; the suite fails.
 */
export const within = async (
  promise: Promise<void>,
  ms: number,
  failure: string,
): Promise<void> => {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(failure)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
};
