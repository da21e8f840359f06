/**
 * Reading a Gemini CLI session file into the list of messages Gemini CLI
 * itself would load from it (its `loadConversationRecord`), with the lines
 * every message was written on, for `gemini_cli.ts` to import.
 *
 * Gemini CLI 0.61 appends JSON records to `chats/session-*.jsonl`: a
 * metadata record (`sessionId`, `projectHash`, `startTime`, ...), message
 * records (`{id, timestamp, type, content, ...}`), `{$set: {...}}` patches
 * of the metadata (a `$set` of `messages` replaces the whole list) and
 * `{$rewindTo: id}` (that message and all after it are taken off). A
 * message is written again under the same id as it grows (its tool calls,
 * their results, its tokens): the later record wins, in the place of the
 * first. Older versions wrote one JSON document `{sessionId, projectHash,
 * startTime, lastUpdated, messages}`, read as a metadata record holding
 * every message.
 *
 * @module
 * @internal
 */
import { type Builder, ok, type Step } from "./builder.ts";
import type { RecordHandler, RecordTable } from "./records.ts";
import { notCarried, skip } from "./notes.ts";
import { isRecord, str } from "./values.ts";

type Rec = Record<string, unknown>;

/** A message as Gemini CLI holds it at the end, with the line that won. */
export interface GeminiMessage {
  readonly id: string;
  readonly value: Rec;
  readonly line: number;
}

/** The state of a Gemini CLI import while its records are read. */
export interface GeminiState {
  readonly b: Builder;
  /** The session's metadata, every patch applied. */
  meta: Rec;
  /** The messages Gemini CLI holds, in the place each id first took. */
  readonly messages: Map<string, GeminiMessage>;
  /** Every line each id was written on, in order. */
  readonly writes: Map<string, number[]>;
  /** The line of a message of a whole-JSON document, by its id. */
  lineOf: ((id: string, fallback: number) => number) | undefined;
}

/** The empty state over a builder. */
export const geminiState = (b: Builder): GeminiState => ({
  b,
  meta: {},
  messages: new Map(),
  writes: new Map(),
  lineOf: undefined,
});

/** Holds one message record, written on `line` (the later write wins). */
const hold = (s: GeminiState, value: Rec, line: number): void => {
  const id = str(value.id);
  if (id === undefined) return;
  const seen = s.writes.get(id);
  if (seen === undefined) s.writes.set(id, [line]);
  else if (seen[seen.length - 1] !== line) seen.push(line);
  s.messages.set(id, { id, value, line });
};

/** Holds every message of a list, in order (a document's, or a `$set`'s). */
const holdAll = (s: GeminiState, list: unknown, line: number): void => {
  if (!Array.isArray(list)) return;
  for (const m of list) {
    if (isRecord(m)) hold(s, m, s.lineOf?.(str(m.id) ?? "", line) ?? line);
  }
};

/** A metadata record (and a whole-JSON document, whose messages it holds). */
export const metadata = (s: GeminiState): RecordHandler => (value, line) => {
  const { messages, ...rest } = value;
  s.meta = { ...s.meta, ...rest };
  holdAll(s, messages, line);
  return ok;
};

/** A message record. */
export const message = (s: GeminiState): RecordHandler => (value, line) => {
  hold(s, value, line);
  return ok;
};

/** A `$set` patch: the metadata, or the whole message list replaced. */
export const patch = (s: GeminiState): RecordHandler => (value, line) => {
  const set = isRecord(value.$set) ? value.$set : {};
  const { messages, ...rest } = set;
  s.meta = { ...s.meta, ...rest };
  if (Array.isArray(messages)) {
    s.messages.clear();
    holdAll(s, messages, line);
  }
  return ok;
};

/** A `$rewindTo`: that message and every later one taken off (all, if unknown). */
export const rewind = (s: GeminiState): RecordHandler => (value) => {
  const to = str(value.$rewindTo) ?? "";
  const ids = [...s.messages.keys()];
  const at = ids.indexOf(to);
  for (const id of at === -1 ? ids : ids.slice(at)) s.messages.delete(id);
  return ok;
};

/** The kind of a record: what the report counts. */
const kindOf = (
  value: Rec,
): { readonly type: string; readonly kind: string } => {
  if (isRecord(value.$set)) {
    return { type: "$set", kind: `$set/${Object.keys(value.$set).join("+")}` };
  }
  if (typeof value.$rewindTo === "string") {
    return { type: "$rewindTo", kind: "$rewindTo" };
  }
  if (typeof value.id === "string") {
    return {
      type: "message",
      kind: `message/${str(value.type) ?? "unknown"}`,
    };
  }
  if (
    typeof value.sessionId === "string" && typeof value.projectHash === "string"
  ) return { type: "metadata", kind: "metadata" };
  return { type: "unknown", kind: "unknown" };
};

/**
 * How a session file's records are told apart and handled.
 *
 * @param s The import's state.
 * @returns The table.
 */
export const geminiLines = (s: GeminiState): RecordTable => ({
  what: "record",
  kindOf,
  handlers: {
    metadata: metadata(s),
    message: message(s),
    $set: patch(s),
    $rewindTo: rewind(s),
  },
});

/**
 * Reports what the records left behind: each earlier write of a message
 * Gemini CLI holds (merged into the later one), and every message it no
 * longer holds (taken off by a rewind or a `$set` of the list).
 *
 * @param s The import's state, every record read.
 * @returns Nothing.
 */
export const reportWrites = (s: GeminiState): Step => {
  const merged = new Set<number>();
  for (const [id, lines] of s.writes) {
    const kept = s.messages.get(id);
    if (kept === undefined) {
      notCarried(
        s.b,
        lines[lines.length - 1] ?? 0,
        "message",
        `message ${
          JSON.stringify(id)
        }, which Gemini CLI no longer holds (taken off by $rewindTo or by a $set of the message list)`,
      );
      continue;
    }
    for (const line of lines) if (line !== kept.line) merged.add(line);
  }
  for (const line of [...merged].sort((x, y) => x - y)) {
    skip(
      s.b,
      "rewritten",
      line,
      "an earlier write of a message written again under the same id (a later line, or a $set of the message list): merged, the later one wins",
    );
  }
  return ok;
};
