/**
 * Timing one step at a time, for the benchmarks that judge a single operation
 * by its median (a mean mostly measures whichever major collection lands
 * inside). It imports nothing of the library, so `bench/replace_versions.ts`
 * can time other checkouts with it. It is not part of the package.
 *
 * @module
 */

/** Collects garbage when the process runs with `--v8-flags=--expose-gc`; otherwise does nothing. */
export const gc = (): void => {
  const collect: unknown = Reflect.get(globalThis, "gc");
  if (typeof collect === "function") collect();
};

/** The median of `xs` (the upper one of an even count), or NaN when empty. */
export const median = (xs: ReadonlyArray<number>): number =>
  [...xs].sort((a, b) => a - b)[xs.length >> 1] ?? NaN;

/**
 * Runs `step` over `items` from `start`, each call timed alone, after a
 * {@link gc} so that no earlier garbage is collected inside the clock.
 *
 * @param start The state the first step applies to.
 * @param items What each step applies, in order.
 * @param step One step: the next state from the state and an item.
 * @returns The state after the last step and each step's time in ms.
 */
export const timeEach = <S, I>(
  start: S,
  items: Iterable<I>,
  step: (state: S, item: I) => S,
): { readonly last: S; readonly times: ReadonlyArray<number> } => {
  gc();
  const times: number[] = [];
  let state = start;
  for (const item of items) {
    const begin = performance.now();
    state = step(state, item);
    times.push(performance.now() - begin);
  }
  return { last: state, times };
};
