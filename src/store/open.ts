/**
 * What opening and creating a session mean alike in every store layer:
 * the reader options an open passes on, the report of the handle it
 * makes, and the session a `create` starts from.
 *
 * @module
 * @internal
 */
import * as Clock from "effect/Clock";
import * as Effect from "effect/Effect";
import * as Result from "effect/Result";
import type * as Scope from "effect/Scope";
import type { Vocabulary } from "../core/decode.ts";
import { FORMAT_VERSION } from "../core/event.ts";
import { Session, type SessionHeader } from "../session/session.ts";
import { FormatTooOld } from "../log/errors.ts";
import type { LoadedLog, ReadOptions } from "../log/reader.ts";
import type {
  CreateError,
  CreateOptions,
  OpenError,
  OpenOptions,
  OpenReport,
  SessionHandle,
  SessionStore,
} from "./store.ts";
import type { StoreCore } from "./core.ts";

/**
 * A layer's `open`: `locate` finds the session when the open runs, then
 * `openRead` or `openWrite` (as `options.mode` says; `read` by default)
 * makes the handle.
 *
 * @param locate Finds the session, or fails.
 * @param openRead Makes a read handle on the located session.
 * @param openWrite Makes a write handle on it, held by the caller's scope.
 * @returns The layer's `open`.
 */
export const openWith = <L>(
  locate: (id: string) => Result.Result<L, OpenError>,
  openRead: <E>(
    id: string,
    located: L,
    options: OpenOptions<E>,
  ) => Effect.Effect<SessionHandle, OpenError | E>,
  openWrite: <E>(
    id: string,
    located: L,
    options: OpenOptions<E>,
  ) => Effect.Effect<SessionHandle, OpenError | E, Scope.Scope>,
): StoreCore["open"] =>
<E = never>(
  id: string,
  options: OpenOptions<E> = {},
): Effect.Effect<SessionHandle, OpenError | E, Scope.Scope> =>
  Effect.suspend((): Effect.Effect<
    SessionHandle,
    OpenError | E,
    Scope.Scope
  > => {
    const located = locate(id);
    if (Result.isFailure(located)) return Effect.fail(located.failure);
    return (options.mode ?? "read") === "read"
      ? openRead(id, located.success, options)
      : openWrite(id, located.success, options);
  });

/**
 * The reader options of an open: the vocabulary and line limit always,
 * `recover` and `migrate` only for a read handle (`strict` is false).
 *
 * @param options The open's options.
 * @param strict Whether a write handle is being opened.
 * @returns The options for the log reader.
 */
export const readOptionsOf = <E>(
  options: OpenOptions<E> | undefined,
  strict: boolean,
): ReadOptions<E> => ({
  ...(options?.vocabulary === undefined
    ? {}
    : { vocabulary: options.vocabulary }),
  ...(options?.maxLineBytes === undefined
    ? {}
    : { maxLineBytes: options.maxLineBytes }),
  ...(strict || options?.recover === undefined
    ? {}
    : { recover: options.recover }),
  ...(strict || options?.migrate === undefined
    ? {}
    : { migrate: options.migrate }),
});

/**
 * A log a writer may append to: one of the current format version (an
 * older one is migrated first, by a reader), else `FormatTooOld`.
 *
 * @param log The log as read for a write handle.
 * @returns `Effect<LoadedLog, FormatTooOld>`: the log.
 */
export const writableLog = (
  log: LoadedLog,
): Effect.Effect<LoadedLog, FormatTooOld> =>
  log.version === FORMAT_VERSION ? Effect.succeed(log) : Effect.fail(
    new FormatTooOld({ version: log.version, supported: FORMAT_VERSION }),
  );

/**
 * The report of a handle opened on a loaded log.
 *
 * @param log The log as read.
 * @param from The seq it was read from (a checkpoint's); its base by
 * default.
 * @returns Its events, torn tail and where reading stopped.
 */
export const reportOf = (
  log: LoadedLog,
  from: number = log.session.surface.baseSeq,
): OpenReport => ({
  events: log.session.surface.nextSeq - from,
  tornTail: log.report.tornTail,
  stoppedAt: log.report.stoppedAt,
});

/**
 * The report of a write handle on a whole log.
 *
 * @param events The events the log holds.
 * @returns A report with no torn tail and no stop.
 */
export const wholeReport = (events: number): OpenReport => ({
  events,
  tornTail: undefined,
  stoppedAt: undefined,
});

/** What a `create` stores. */
export interface Created {
  /** The header of the new session. */
  readonly header: SessionHeader;
  /** The vocabulary its events are stored with. */
  readonly vocabulary: Vocabulary | undefined;
  /** The session itself. */
  readonly session: Session;
}

const isSession = (init: SessionHeader | Session): init is Session =>
  "surface" in init && "header" in init;

/**
 * What `create(init, options)` stores: a session given whole, or a new
 * empty one made from a header; the vocabulary is the options' one, else
 * the given session's.
 *
 * @param init A header or a whole session.
 * @param options The create's options.
 * @returns The header, vocabulary and session.
 */
export const createdFrom = (
  init: SessionHeader | Session,
  options: CreateOptions | undefined,
): Created => {
  const header = isSession(init) ? init.header : init;
  const vocabulary = options?.vocabulary ??
    (isSession(init) ? init.vocabulary : undefined);
  const session = isSession(init) ? init : Session.make(
    header,
    vocabulary === undefined ? undefined : { vocabulary },
  );
  return { header, vocabulary, session };
};

/**
 * Opens session `id` for writing with its whole log or, when the store has
 * none, creates it unseeded at the clock's time with the `meta` that
 * `metaOf` gives (asked only then); `created` says which. For an adapter
 * whose host names sessions the store may not have yet.
 * @internal
 */
export const openOrCreate = (
  store: SessionStore,
  id: string,
  metaOf?: () => { readonly [key: string]: unknown },
): Effect.Effect<
  { readonly handle: SessionHandle; readonly created: boolean },
  OpenError | CreateError,
  Scope.Scope
> =>
  store.open(id, { mode: "write", wholeLog: true }).pipe(
    Effect.map((handle) => ({ handle, created: false })),
    Effect.catchTag("SessionNotFound", () =>
      Effect.gen(function* () {
        const createdAt = yield* Clock.currentTimeMillis;
        const handle = yield* store.create({
          id,
          createdAt,
          isSeeded: false,
          ...(metaOf === undefined ? {} : { meta: metaOf() }),
        });
        return { handle, created: true };
      })),
  );
