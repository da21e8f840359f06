/**
 * Acquiring a handle so that it cannot leak: what it holds is released
 * when the caller's scope closes, and at once when acquiring it fails or
 * is interrupted. Shared by every store layer.
 *
 * @module
 * @internal
 */
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import type * as Scope from "effect/Scope";

/**
 * Registers `release` with the scope, then runs `build` (interruptible),
 * which takes resources one by one into a state `release` reads. `release`
 * runs at once when `build` does not succeed, and again when the scope
 * closes; it must be idempotent and cope with a half-built state.
 *
 * @param release Releases whatever the state holds; idempotent.
 * @param build Takes the resources and returns the handle.
 * @returns `Effect<A, E, R | Scope>`.
 */
export const acquireScoped = <A, E, R>(
  release: () => void,
  build: Effect.Effect<A, E, R>,
): Effect.Effect<A, E, R | Scope.Scope> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.andThen(
      Effect.addFinalizer(() => Effect.sync(release)),
      restore(build).pipe(
        Effect.onExit((exit) =>
          Exit.isSuccess(exit) ? Effect.void : Effect.sync(release)
        ),
      ),
    )
  );
