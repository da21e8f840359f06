/**
 * pi session files (format versions 1 to 3) to v3 events.
 *
 * - Header `{type: "session", version?, id, timestamp, cwd}`; no `version`
 *   means 1. A fork's header names its `parentSession`: pi copies the
 *   history it forks from into the fork's file, and the report names the
 *   parent (found as written or beside the file) and the entry the fork
 *   leaves it at, or says the parent is not found. Version 1 has no entry ids (a linear log); versions 2 and 3
 *   have an `id`/`parentId` tree, imported whole in file order: an entry
 *   whose parent is not the entry before it goes on from its parent by a
 *   rewind, carried by its user message (a branch that starts otherwise is
 *   left out and reported with its lines); the last entry's branch is
 *   current. A first pass reads the tree (ids and lines only), a second
 *   imports.
 * - `message` entries by role: `user` opens a turn; `assistant` is a step
 *   (`thinking` → `reasoning`, `toolCall` → `tool-call` with its arguments
 *   as JSON text; a thinking signature and an error message are kept in the
 *   message's `stream`); `toolResult` is paired with its call by id (its
 *   `details` go to the result's `meta`); `bashExecution` becomes the user
 *   message pi sends for it (skipped when excluded from context); `custom`
 *   (`hookMessage` in v2) messages are user messages from a plugin.
 * - `compaction` replaces the surface nodes before `firstKeptEntryId` (v1:
 *   `firstKeptEntryIndex`, the header counted as index 0) by its summary,
 *   wrapped in `<summary>` as pi sends it; an empty branch summary is
 *   skipped, and a call without a result is answered `No result provided`.
 *   Aborted and errored assistant messages are kept (pi drops them): see
 *   `docs/importing.md` for the deliberate differences.
 * - `model_change` becomes `request/context`; `thinking_level_change` an
 *   ignorable `pi/thinking_level_change` event; `custom`, `label` and
 *   `session_info` entries carry nothing the model saw and are skipped.
 * - An assistant message that stopped with `aborted` or `error` ends its
 *   turn; calls it issued without results are closed by repair.
 *
 * The import is a {@link PiState} and steps over it: one per entry type
 * (a table handed to `handleRecord`), the message roles, the replay of kept
 * messages after a compaction, and the end.
 *
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import { surfaceEvent, surfaceNodes } from "../surface/mod.ts";
import {
  append,
  assistantMessage,
  branchPoint,
  type Builder,
  closeTurn,
  compactBefore,
  type Converted,
  done,
  epochOf,
  fileName,
  forEachRecord,
  fromLineOnward,
  type Handled,
  handleRecord,
  importedHeader,
  type Importer,
  ImportVersionUnsupported,
  isRecord,
  notAnObject,
  notCarried,
  ok,
  type RecordHandler,
  type RecordReadOptions,
  type RecordReadSummary,
  type RecordTable,
  rewindPlan,
  setTime,
  skip,
  skipping,
  type Step,
  str,
  synthesized,
  toolResult,
  unknownType,
  userMessage,
  userTurn,
} from "./kit.ts";
import {
  bashText,
  branchText,
  compactionText,
  convertBlocks,
  resultBlocks,
  stopReasons,
} from "./pi_content.ts";
import {
  branchesOff,
  forkNote,
  pathToRoot,
  type PiTree,
  readPiTree,
} from "./pi_tree.ts";

/**
 * What the second pass of a pi import knows besides the builder: the first
 * pass's tree and the path it follows, the model in effect, and how the
 * last answer stopped. The steps below read and change it.
 */
export interface PiState {
  /** The log being built. */
  readonly b: Builder;
  /** The path, read again to replay kept messages after a compaction. */
  readonly file: string;
  /** How the file is read. */
  readonly options: RecordReadOptions;
  /** The header and the entry tree (the first pass). */
  readonly tree: PiTree;
  /** The ids on the path from the last entry to the root. */
  readonly onPath: ReadonlySet<string>;
  /** Version 1: no entry ids, a linear log whose compactions count entries. */
  readonly linear: boolean;
  /** The provider and model of an assistant message that names none. */
  model: { provider: string; model: string };
  /** True once the header line has gone by. */
  seenHeader: boolean;
  /** How the last assistant message stopped, while its turn is open. */
  lastStop: string | undefined;
  /** The last seq of the log once each entry was imported, by id. */
  readonly ends: Map<string, number>;
  /** The last seq before the first entry (-1: none). */
  rootEnd: number | undefined;
  /** The entry imported last (the current leaf), by id. */
  previous: string | undefined;
  /** Entries of branches no rewind could reach, left out (and reported). */
  readonly dropped: Set<string>;
}

/**
 * The state of the second pass over a file whose first pass read `tree`.
 *
 * @param b The builder.
 * @param file The path.
 * @param options Recover or refuse; the line bound.
 * @param tree The header and the entry tree.
 * @param version The header's format version (1 to 3).
 * @returns The state.
 */
export const piState = (
  b: Builder,
  file: string,
  options: RecordReadOptions,
  tree: PiTree,
  version: 1 | 2 | 3,
): PiState => {
  const h = tree.header ?? {};
  return {
    b,
    file,
    options,
    tree,
    onPath: pathToRoot(tree.tree, tree.lastId),
    linear: version === 1,
    model: {
      provider: str(h.provider) ?? "unknown",
      model: str(h.modelId) ?? "unknown",
    },
    seenHeader: false,
    lastStop: undefined,
    ends: new Map(),
    rootEnd: undefined,
    previous: undefined,
    dropped: new Set(),
  };
};

/** An entry type's step: the state, the entry, its line and its kind. */
export type EntryStep = (
  s: PiState,
  value: Record<string, unknown>,
  line: number,
  kind: string,
) => Handled;

/**
 * Imports again the messages on the path from \`from\` up to the
 * compaction at \`to\`, after the summary that replaced them: pi sends the
 * latest summary first, then the kept entries. Their calls, taken off the
 * surface with them, are forgotten so that the copies pair again.
 *
 * @param s The import's state.
 * @param from The line of the first kept entry.
 * @param to The compaction's line.
 * @param kind The compaction's kind.
 * @returns Nothing, or the refusal.
 */
export const replayKept = (
  s: PiState,
  from: number,
  to: number,
  kind: string,
  onPath: ReadonlySet<string> = s.onPath,
): Handled => {
  const b = s.b;
  for (const [callId, call] of [...b.calls]) {
    if (surfaceEvent(b.surface, call.message) === undefined) {
      b.calls.delete(callId);
    }
  }
  let copies = 0;
  const replayed = forEachRecord(s.file, s.options, (value, at): Step => {
    if (at < from || at >= to || !isRecord(value)) return ok;
    if (value.type !== "message" || !isRecord(value.message)) return ok;
    if (typeof value.id === "string" && !onPath.has(value.id)) return ok;
    copies += 1;
    const role = str(value.message.role) ?? "unknown";
    return piMessage(
      s,
      at,
      `message/${role}`,
      str(value.id) ?? `pi-L${at}`,
      value.message,
    );
  });
  if (Result.isFailure(replayed)) return Result.fail(replayed.failure);
  synthesized(
    b,
    to,
    kind,
    `the ${copies} kept messages follow the summary again, as pi sends the summary first`,
  );
  return ok;
};

/** A `compaction` entry: the surface before its first kept entry replaced by its summary. */
export const compaction: EntryStep = (s, value, line, kind) => {
  const b = s.b;
  const summary = str(value.summary) ?? "";
  let keptLine: number | undefined;
  if (typeof value.firstKeptEntryId === "string") {
    keptLine = s.tree.tree.get(value.firstKeptEntryId)?.line;
  } else if (typeof value.firstKeptEntryIndex === "number") {
    keptLine = s.tree.indexLine[value.firstKeptEntryIndex];
  }
  const compactionId = str(value.id) ?? `pi-L${line}`;
  if (keptLine === undefined) {
    notCarried(
      b,
      line,
      kind,
      "compaction whose first kept entry is not in the file; everything before it is replaced",
    );
  }
  const keepFrom = keptLine === undefined
    ? undefined
    : fromLineOnward(b, keptLine);
  const front = surfaceNodes(b.surface)[0];
  if (
    keptLine === undefined || keepFrom === undefined ||
    front === undefined || !keepFrom(front)
  ) {
    return done(compactBefore(b, line, {
      compactionId,
      summary,
      content: [{ type: "text", text: compactionText(summary) }],
      kind,
      ...(keepFrom === undefined ? {} : { keepFrom }),
    }));
  }
  // Everything on the surface is kept, and pi sends the summary first:
  // the summary replaces the kept messages, which follow it again.
  const replaced = compactBefore(b, line, {
    compactionId,
    summary,
    content: [{ type: "text", text: compactionText(summary) }],
    kind,
  });
  if (Result.isFailure(replaced)) return Result.fail(replaced.failure);
  // The kept entries are those on the compaction's own branch.
  const onPath = typeof value.id === "string"
    ? pathToRoot(s.tree.tree, value.id)
    : s.onPath;
  return replayKept(s, keptLine, line, kind, onPath);
};

/** A `message` entry: by its role ({@link piMessage}). */
export const messageEntry: EntryStep = (s, value, line, kind) => {
  const m = value.message;
  if (!isRecord(m)) {
    notCarried(s.b, line, kind, "message entry without a message");
    return ok;
  }
  const id = str(value.id) ?? `pi-L${line}`;
  if (value.timestamp === undefined) setTime(s.b, m.timestamp);
  return piMessage(s, line, kind, id, m);
};

/** A `branch_summary` entry: a user message from a plugin, unless empty. */
export const branchSummary: EntryStep = (s, value, line, kind) => {
  const summary = str(value.summary) ?? "";
  if (summary === "") {
    skip(s.b, kind, line, "an empty branch summary, which pi does not send");
    return ok;
  }
  const made = userMessage(s.b, line, str(value.id) ?? `pi-L${line}`, [{
    type: "text",
    text: branchText(summary),
  }], {
    kind: "plugin",
    plugin: "pi/branch-summary",
  });
  return done(made);
};

/** A `custom_message` entry: a user message from its plugin. */
export const customMessage: EntryStep = (s, value, line, kind) => {
  const converted = convertBlocks(s.b, line, kind, value.content);
  const made = userMessage(
    s.b,
    line,
    str(value.id) ?? `pi-L${line}`,
    converted.content,
    {
      kind: "plugin",
      plugin: `pi/${str(value.customType) ?? "custom"}`,
    },
  );
  return done(made);
};

/** A `model_change` entry: `request/context`, and the model of what follows. */
export const modelChange: EntryStep = (s, value, line) => {
  s.model = {
    provider: str(value.provider) ?? s.model.provider,
    model: str(value.modelId) ?? s.model.model,
  };
  const made = append(s.b, { type: "request/context", data: s.model }, line);
  return done(made);
};

/** A `thinking_level_change` entry: an ignorable event. */
export const thinkingLevelChange: EntryStep = (s, value, line) => {
  const made = append(s.b, {
    type: "pi/thinking_level_change",
    ignorable: true,
    data: { thinkingLevel: value.thinkingLevel ?? null },
  }, line);
  return done(made);
};

const harnessState = "harness state pi never sends to the model";

/** An entry step as the handler of its type. */
const bind =
  (s: PiState, step: EntryStep): RecordHandler => (value, line, kind) =>
    step(s, value, line, kind);

/**
 * Keeps the tree: an entry whose parent is not the entry imported last
 * starts another branch, so the branch left is closed (its open turn
 * ended) and a rewind, carried by an empty `user/message` from the
 * `pi/tree` plugin (it derives no message), takes the surface back to
 * right after the parent. The point is the parent's last event, or a later
 * log-only one that ends its turn (a rewind lands where nothing is open);
 * where there is none, the branch is left out and reported, as are the
 * entries under it. Undefined: import the entry.
 */
const followTree = (
  s: PiState,
  value: Record<string, unknown>,
  id: string,
  line: number,
): Handled | undefined => {
  const b = s.b;
  const parent = s.tree.tree.get(id)?.parent ?? null;
  if (parent !== null && s.dropped.has(parent)) {
    s.dropped.add(id);
    return ok;
  }
  if (s.previous === undefined) {
    s.rootEnd = b.surface.nextSeq - 1;
  } else if (!s.dropped.has(s.previous)) {
    s.ends.set(s.previous, b.surface.nextSeq - 1);
  }
  if (s.previous === undefined || parent === s.previous) {
    s.previous = id;
    return undefined;
  }
  const end = parent === null ? s.rootEnd : s.ends.get(parent);
  const found = end === undefined || !carriesRewind(value)
    ? undefined
    : branchPoint(b, end);
  if (found === undefined) {
    s.dropped.add(id);
    return ok;
  }
  const closed = closeTurn(
    b,
    line,
    s.lastStop === undefined || s.lastStop === "toolUse"
      ? "interrupted"
      : stopReasons[s.lastStop],
  );
  if (Result.isFailure(closed)) return Result.fail(closed.failure);
  s.lastStop = undefined;
  // Closing the branch left added events, not nodes: the plan holds.
  if (rewindPlan(b.surface, found.point) === undefined) {
    s.dropped.add(id);
    return ok;
  }
  b.rewindTo = found.point;
  synthesized(
    b,
    line,
    "branch",
    `a rewind to seq ${found.point}: this entry goes on from its parent, another branch than the entry before it`,
  );
  s.previous = id;
  return undefined;
};

/**
 * Whether an entry imports as a user message, which can carry a rewind:
 * a user, command, plugin or summary message, a non-empty branch summary,
 * a custom message. A branch that starts otherwise is left out.
 */
const carriesRewind = (value: Record<string, unknown>): boolean => {
  const m = value.message;
  if (value.type === "message" && isRecord(m)) {
    switch (m.role) {
      case "user":
      case "custom":
      case "hookMessage":
        return true;
      case "bashExecution":
        return m.excludeFromContext !== true;
      case "branchSummary":
      case "compactionSummary":
        return (str(m.summary) ?? "") !== "";
      default:
        return false;
    }
  }
  if (value.type === "branch_summary") return (str(value.summary) ?? "") !== "";
  return value.type === "custom_message";
};

/**
 * How a pi file's entries are told apart and handled: by `type` (and a
 * message's role, for the report); an entry off the path is on a branch,
 * already reported as one.
 *
 * @param s The import's state.
 * @returns The table.
 */
export const piEntries = (s: PiState): RecordTable => ({
  what: "entry type",
  kindOf: (value) => {
    const type = str(value.type) ?? "unknown";
    const role = type === "message" && isRecord(value.message)
      ? str(value.message.role)
      : undefined;
    return { type, kind: role === undefined ? type : `${type}/${role}` };
  },
  before: (value, line) => {
    if (typeof value.id === "string" && s.tree.tree.size > 0) {
      const moved = followTree(s, value, value.id, line);
      if (moved !== undefined) return moved;
    }
    setTime(s.b, value.timestamp);
    return undefined;
  },
  handlers: {
    message: bind(s, messageEntry),
    compaction: bind(s, compaction),
    branch_summary: bind(s, branchSummary),
    custom_message: bind(s, customMessage),
    model_change: bind(s, modelChange),
    thinking_level_change: bind(s, thinkingLevelChange),
    custom: skipping(s.b, harnessState),
    label: skipping(s.b, harnessState),
    session_info: skipping(s.b, harnessState),
  },
});

/**
 * One record of the second pass: the header sets the clock, an entry goes
 * to its step through `table`.
 *
 * @param s The import's state.
 * @param table The entry table ({@link piEntries}).
 * @param value The record.
 * @param line Its 1-based line.
 * @returns Nothing, or the refusal.
 */
export const entryRecord = (
  s: PiState,
  table: RecordTable,
  value: unknown,
  line: number,
): Handled => {
  if (s.linear) s.tree.indexLine.push(line);
  if (!s.seenHeader) {
    s.seenHeader = true;
    setTime(s.b, s.tree.header?.timestamp);
    return ok;
  }
  if (!isRecord(value)) {
    notAnObject(s.b, line);
    return ok;
  }
  return handleRecord(s.b, table, value, line);
};

/**
 * Ends the import: a turn whose last answer ended it (stop, length, error,
 * abort) is closed; one that stopped after tool results was cut off, and is
 * left open for `repair`.
 *
 * @param s The import's state.
 * @returns Nothing, or the refusal.
 */
export const endPi = (s: PiState): Step =>
  s.lastStop !== undefined && s.lastStop !== "toolUse" && s.b.turn !== undefined
    ? closeTurn(s.b, 0, stopReasons[s.lastStop])
    : ok;

/**
 * The header handed back: the source's id, start and where it came from.
 *
 * @param s The import's state.
 * @param version The format version.
 * @param read What the second pass saw.
 * @returns What the importer hands back.
 */
export const piConverted = (
  s: PiState,
  version: 1 | 2 | 3,
  read: RecordReadSummary,
): Converted => {
  const h = s.tree.header ?? {};
  return {
    header: importedHeader(s.file, str(h.id), epochOf(h.timestamp), {
      tool: "pi",
      version,
      file: fileName(s.file),
      ...(h.id === undefined ? {} : { id: h.id }),
      ...(h.cwd === undefined ? {} : { cwd: h.cwd }),
      ...(h.branchedFrom === undefined ? {} : { branchedFrom: h.branchedFrom }),
      ...(h.parentSession === undefined
        ? {}
        : { parentSession: h.parentSession }),
    }),
    formatVersion: version,
    read,
  };
};

/**
 * Imports a pi session file into the builder: a first pass reads the tree
 * ({@link readPiTree}), a second imports the entries on the path.
 *
 * @param file The path.
 * @param options Recover or refuse; the line bound.
 * @param b The builder.
 * @returns The header and what the reader saw.
 */
export const importPi: Importer = (file, options, b) => {
  const tree = readPiTree(file, options);
  if (Result.isFailure(tree)) return Result.fail(tree.failure);
  const declared = tree.success.header.version;
  const version = declared === undefined ? 1 : declared;
  if (version !== 1 && version !== 2 && version !== 3) {
    return Result.fail(
      new ImportVersionUnsupported({
        from: "pi",
        version,
        supported: [1, 2, 3],
      }),
    );
  }
  const s = piState(b, file, options, tree.success, version);
  const fork = forkNote(file, options, tree.success);
  if (fork !== undefined) notCarried(b, 1, "session", fork);

  b.closerText = "No result provided";
  // Version 1 compactions count entries from the header: the second pass
  // counts them again.
  if (s.linear) tree.success.indexLine.length = 0;
  const table = piEntries(s);
  const read = forEachRecord(
    file,
    options,
    (value, line) => entryRecord(s, table, value, line),
  );
  if (Result.isFailure(read)) return Result.fail(read.failure);
  const ended = endPi(s);
  if (Result.isFailure(ended)) return Result.fail(ended.failure);
  // The branches no rewind could reach are reported as branches off.
  const imported = new Set(
    [...tree.success.tree.keys()].filter((id) => !s.dropped.has(id)),
  );
  b.branches = branchesOff(tree.success.tree, imported);
  return Result.succeed(piConverted(s, version, read.success));
};

/**
 * A pi message, by its role: a user message opens a turn, an assistant
 * message is a step (its stop reason kept in the state), a tool result is
 * paired with its call; commands, plugin messages and summaries become user
 * messages as pi sends them.
 *
 * @param s The import's state.
 * @param line The entry's line.
 * @param kind The entry's kind.
 * @param id The message id.
 * @param m The message.
 * @returns Nothing, or the refusal.
 */
export const piMessage = (
  s: PiState,
  line: number,
  kind: string,
  id: string,
  m: Record<string, unknown>,
): Step => {
  const b = s.b;
  switch (m.role) {
    case "user": {
      // A message carrying a rewind comes first, then its turn opens (as
      // a turn after the library's rewind does).
      const rewinds = b.rewindTo !== undefined;
      if (!rewinds) {
        const opened = userTurn(b, line);
        if (Result.isFailure(opened)) return opened;
      }
      s.lastStop = undefined;
      const converted = convertBlocks(b, line, kind, m.content);
      const made = userMessage(b, line, id, converted.content, {
        kind: "user",
      });
      if (Result.isFailure(made) || !rewinds) return done(made);
      return userTurn(b, line);
    }
    case "assistant": {
      const converted = convertBlocks(b, line, kind, m.content);
      const stop = str(m.stopReason);
      const stream = [...converted.stream];
      if (m.errorMessage !== undefined) {
        stream.push({
          type: "error",
          stopReason: stop,
          errorMessage: m.errorMessage,
        });
      }
      const fallback = s.model;
      const made = assistantMessage(b, line, id, converted.content, {
        provider: str(m.provider) ?? fallback.provider,
        model: str(m.model) ?? fallback.model,
        ...(m.usage === undefined ? {} : { usage: m.usage }),
        ...(stop === "aborted" ? { interrupted: true } : {}),
        stream,
      });
      if (Result.isFailure(made)) return Result.fail(made.failure);
      s.lastStop = stop;
      const reason = stop === undefined ? undefined : stopReasons[stop];
      if (reason !== undefined) b.reason = reason;
      return Result.succeed(undefined);
    }
    case "toolResult": {
      const converted = convertBlocks(b, line, kind, m.content);
      return toolResult(
        b,
        line,
        kind,
        str(m.toolCallId) ?? "",
        resultBlocks(converted.content),
        m.isError === true,
        m.details === undefined ? undefined : { details: m.details },
      );
    }
    case "bashExecution": {
      if (m.excludeFromContext === true) {
        skip(
          b,
          `${kind} (excluded)`,
          line,
          "a command run with !!, which pi keeps out of the model's context",
        );
        return Result.succeed(undefined);
      }
      synthesized(
        b,
        line,
        kind,
        "user message with the text pi sends for a command the user ran",
      );
      return done(
        userMessage(b, line, id, [{ type: "text", text: bashText(m) }], {
          kind: "plugin",
          plugin: "pi/bash",
        }),
      );
    }
    case "custom":
    case "hookMessage": {
      const converted = convertBlocks(b, line, kind, m.content);
      return done(userMessage(b, line, id, converted.content, {
        kind: "plugin",
        plugin: `pi/${str(m.customType) ?? "custom"}`,
      }));
    }
    case "branchSummary":
    case "compactionSummary": {
      const summary = str(m.summary) ?? "";
      if (summary === "") {
        skip(b, kind, line, "an empty summary, which pi does not send");
        return Result.succeed(undefined);
      }
      return done(
        userMessage(
          b,
          line,
          id,
          [{
            type: "text",
            text: m.role === "branchSummary"
              ? branchText(summary)
              : compactionText(summary),
          }],
          {
            kind: "plugin",
            plugin: `pi/${m.role}`,
          },
        ),
      );
    }
    default:
      return unknownType(b, line, kind, "message role", m.role);
  }
};
