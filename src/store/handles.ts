/**
 * The handles of a store layer: a {@link SessionHandle} whose `session`
 * reads the layer's own state for it, and the way back from a handle to
 * that state. Shared by every store layer.
 *
 * @module
 * @internal
 */
import type { Session } from "../session.ts";
import type { OpenMode, OpenReport, SessionHandle } from "./store.ts";

/** A layer's handles and the state behind each. */
export interface HandleRegistry<S extends { readonly session: Session }> {
  /** A handle whose `session` is `state.session`, remembered with it. */
  readonly make: (
    id: string,
    mode: OpenMode,
    report: OpenReport,
    state: S,
  ) => SessionHandle;
  /** The state behind a handle this registry made, else `undefined`. */
  readonly get: (handle: SessionHandle) => S | undefined;
}

/**
 * A registry of handles; handles are held weakly.
 *
 * @returns An empty {@link HandleRegistry}.
 */
export const makeHandleRegistry = <
  S extends { readonly session: Session },
>(): HandleRegistry<S> => {
  const states = new WeakMap<SessionHandle, S>();
  return {
    make: (id, mode, report, state) => {
      const handle: SessionHandle = {
        id,
        mode,
        report,
        get session(): Session {
          return state.session;
        },
      };
      states.set(handle, state);
      return handle;
    },
    get: (handle) => states.get(handle),
  };
};
