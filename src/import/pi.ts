/**
 * pi session files (format versions 1 to 3) to v3 events.
 *
 * - Header `{type: "session", version?, id, timestamp, cwd}`; no `version`
 *   means 1. Version 1 has no entry ids (a linear log); versions 2 and 3
 *   have an `id`/`parentId` tree: the import is the path from the last
 *   entry to the root, and the other branches are reported with their lines.
 *   A first pass reads the tree (ids and lines only), a second imports.
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
 * @module
 * @internal
 */
import * as Result from "effect/Result";
import { surfaceEvent, surfaceNodes } from "../surface/mod.ts";
import {
  append,
  type Builder,
  done,
  importedHeader,
  ok,
  setTime,
  type Step,
} from "./builder.ts";
import {
  notAnObject,
  notCarried,
  skip,
  synthesized,
  unknownType,
} from "./notes.ts";
import { closeTurn, userTurn } from "./turns.ts";
import { epochOf, fileName, isRecord, str } from "./values.ts";
import { compactBefore, fromLineOnward } from "./compaction.ts";
import { sessionFormatOf } from "./sniff.ts";
import {
  handleRecord,
  notThisFormat,
  type RecordHandler,
  type RecordTable,
  skipping,
} from "./records.ts";
import { assistantMessage, toolResult, userMessage } from "./messages.ts";
import {
  bashText,
  branchText,
  compactionText,
  convertBlocks,
  resultBlocks,
  stopReasons,
} from "./pi_content.ts";
import {
  type ImportError,
  ImportNotASession,
  ImportVersionUnsupported,
} from "./errors.ts";
import { forEachRecord } from "./lines.ts";
import type { Importer } from "./importer.ts";

/** Stops the first pass once a version 1 header is read. */
class HeaderOnly {
  readonly _tag = "HeaderOnly";
}
const headerOnly = new HeaderOnly();

interface TreeEntry {
  readonly line: number;
  readonly parent: string | null;
}

/**
 * Imports a pi session file into the builder.
 *
 * @param file The path.
 * @param options Recover or refuse; the line bound.
 * @param b The builder.
 * @returns The header and what the reader saw.
 */
export const importPi: Importer = (file, options, b) => {
  // Pass 1: the header and the entry tree (ids, parents, lines).
  let header: Record<string, unknown> | undefined;
  const tree = new Map<string, TreeEntry>();
  const indexLine: number[] = [];
  let lastId: string | undefined;
  const first = forEachRecord(
    file,
    options,
    (value, line): Result.Result<void, ImportError | HeaderOnly> => {
      // Version 1 has no tree: its header is all this pass needs.
      if (header !== undefined && header.version === undefined) {
        return Result.fail(headerOnly);
      }
      if (header === undefined) {
        const format = sessionFormatOf(value);
        if (format !== "pi" || !isRecord(value) || value.type !== "session") {
          return Result.fail(
            notThisFormat(
              file,
              "pi",
              format === "pi" ? undefined : format,
              new ImportNotASession({
                from: "pi",
                line,
                expected: 'a "session" header',
              }),
            ),
          );
        }
        header = value;
        indexLine.push(line);
        return Result.succeed(undefined);
      }
      indexLine.push(line);
      if (isRecord(value) && typeof value.id === "string") {
        const parent = typeof value.parentId === "string"
          ? value.parentId
          : null;
        tree.set(value.id, { line, parent });
        lastId = value.id;
      }
      return Result.succeed(undefined);
    },
  );
  if (Result.isFailure(first)) {
    const failure = first.failure;
    if (failure instanceof HeaderOnly) {
      // The header is all the first pass of version 1 reads.
    } else if (
      header === undefined && (failure._tag === "ImportLineNotJson" ||
        failure._tag === "ImportLineTooLong")
    ) {
      return Result.fail(notThisFormat(file, "pi", undefined, failure));
    } else return Result.fail(failure);
  }
  if (header === undefined) {
    return Result.fail(
      notThisFormat(
        file,
        "pi",
        undefined,
        new ImportNotASession({
          from: "pi",
          line: 1,
          expected: 'a "session" header',
        }),
      ),
    );
  }
  const h = header;
  const version = h.version === undefined ? 1 : h.version;
  if (version !== 1 && version !== 2 && version !== 3) {
    return Result.fail(
      new ImportVersionUnsupported({
        from: "pi",
        version,
        supported: [1, 2, 3],
      }),
    );
  }
  // The path from the last entry to the root; everything else is a branch.
  const onPath = new Set<string>();
  for (let id = lastId; id !== undefined && !onPath.has(id);) {
    onPath.add(id);
    const parent = tree.get(id)?.parent;
    id = parent === null || parent === undefined ? undefined : parent;
  }
  const branchOf = new Map<string, string>();
  const rootOf = (id: string): string => {
    const known = branchOf.get(id);
    if (known !== undefined) return known;
    const trail: string[] = [];
    let current = id;
    for (;;) {
      trail.push(current);
      const parent = tree.get(current)?.parent;
      if (
        parent === null || parent === undefined || onPath.has(parent) ||
        !tree.has(parent)
      ) break;
      const cached = branchOf.get(parent);
      if (cached !== undefined) {
        current = cached;
        break;
      }
      current = parent;
    }
    const root = branchOf.get(current) ?? current;
    for (const t of trail) branchOf.set(t, root);
    return root;
  };
  const branches = new Map<string, number[]>();
  for (const [id, entry] of tree) {
    if (onPath.has(id)) continue;
    const root = rootOf(id);
    const lines = branches.get(root);
    if (lines === undefined) branches.set(root, [entry.line]);
    else lines.push(entry.line);
  }
  b.branches = [...branches.entries()].map(([root, lines]) => {
    const parent = tree.get(root)?.parent;
    const fromLine = parent === null || parent === undefined
      ? 0
      : tree.get(parent)?.line ?? 0;
    return { fromLine, lines: lines.sort((x, y) => x - y) };
  }).sort((x, y) => (x.lines[0] ?? 0) - (y.lines[0] ?? 0));

  // Pass 2: the entries on the path, in file order.
  b.closerText = "No result provided";
  const fallbackProvider = str(h.provider) ?? "unknown";
  let model = {
    provider: fallbackProvider,
    model: str(h.modelId) ?? "unknown",
  };
  let seenHeader = false;
  let lastStop: string | undefined;
  const linear = version === 1;
  if (linear) indexLine.length = 0;
  const piContext: PiContext = {
    model: () => model,
    stop: (s) => {
      lastStop = s;
    },
  };
  /**
   * Imports again the messages on the path from \`from\` up to the
   * compaction at \`to\`, after the summary that replaced them: pi sends the
   * latest summary first, then the kept entries. Their calls, taken off the
   * surface with them, are forgotten so that the copies pair again.
   */
  const replayKept = (
    from: number,
    to: number,
    kind: string,
  ): Result.Result<void, ImportError> => {
    for (const [callId, call] of [...b.calls]) {
      if (surfaceEvent(b.surface, call.message) === undefined) {
        b.calls.delete(callId);
      }
    }
    let copies = 0;
    const replayed = forEachRecord(file, options, (value, at): Step => {
      if (at < from || at >= to || !isRecord(value)) return ok;
      if (value.type !== "message" || !isRecord(value.message)) return ok;
      if (typeof value.id === "string" && !onPath.has(value.id)) return ok;
      copies += 1;
      const role = str(value.message.role) ?? "unknown";
      return piMessage(
        b,
        at,
        `message/${role}`,
        str(value.id) ?? `pi-L${at}`,
        value.message,
        piContext,
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
  const harnessState = skipping(
    b,
    "harness state pi never sends to the model",
  );
  const compaction: RecordHandler = (value, line, kind) => {
    const summary = str(value.summary) ?? "";
    let keptLine: number | undefined;
    if (typeof value.firstKeptEntryId === "string") {
      keptLine = tree.get(value.firstKeptEntryId)?.line;
    } else if (typeof value.firstKeptEntryIndex === "number") {
      keptLine = indexLine[value.firstKeptEntryIndex];
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
    return replayKept(keptLine, line, kind);
  };
  const entries: RecordTable = {
    what: "entry type",
    kindOf: (value) => {
      const type = str(value.type) ?? "unknown";
      const role = type === "message" && isRecord(value.message)
        ? str(value.message.role)
        : undefined;
      return { type, kind: role === undefined ? type : `${type}/${role}` };
    },
    // An entry off the path is on a branch, reported as one.
    before: (value) => {
      if (
        typeof value.id === "string" && tree.size > 0 && !onPath.has(value.id)
      ) {
        return ok;
      }
      setTime(b, value.timestamp);
      return undefined;
    },
    handlers: {
      message: (value, line, kind) => {
        const m = value.message;
        if (!isRecord(m)) {
          notCarried(b, line, kind, "message entry without a message");
          return ok;
        }
        const id = str(value.id) ?? `pi-L${line}`;
        if (value.timestamp === undefined) setTime(b, m.timestamp);
        return piMessage(b, line, kind, id, m, piContext);
      },
      compaction,
      branch_summary: (value, line, kind) => {
        const summary = str(value.summary) ?? "";
        if (summary === "") {
          skip(
            b,
            kind,
            line,
            "an empty branch summary, which pi does not send",
          );
          return ok;
        }
        const made = userMessage(b, line, str(value.id) ?? `pi-L${line}`, [{
          type: "text",
          text: branchText(summary),
        }], {
          kind: "plugin",
          plugin: "pi/branch-summary",
        });
        return done(made);
      },
      custom_message: (value, line, kind) => {
        const converted = convertBlocks(b, line, kind, value.content);
        const made = userMessage(
          b,
          line,
          str(value.id) ?? `pi-L${line}`,
          converted.content,
          {
            kind: "plugin",
            plugin: `pi/${str(value.customType) ?? "custom"}`,
          },
        );
        return done(made);
      },
      model_change: (value, line) => {
        model = {
          provider: str(value.provider) ?? model.provider,
          model: str(value.modelId) ?? model.model,
        };
        const made = append(
          b,
          { type: "request/context", data: model },
          line,
        );
        return done(made);
      },
      thinking_level_change: (value, line) => {
        const made = append(b, {
          type: "pi/thinking_level_change",
          ignorable: true,
          data: { thinkingLevel: value.thinkingLevel ?? null },
        }, line);
        return done(made);
      },
      custom: harnessState,
      label: harnessState,
      session_info: harnessState,
    },
  };
  const second = forEachRecord(
    file,
    options,
    (value, line): Result.Result<void, ImportError> => {
      if (linear) indexLine.push(line);
      if (!seenHeader) {
        seenHeader = true;
        setTime(b, h.timestamp);
        return ok;
      }
      if (!isRecord(value)) {
        notAnObject(b, line);
        return ok;
      }
      return handleRecord(b, entries, value, line);
    },
  );
  if (Result.isFailure(second)) return Result.fail(second.failure);
  // A turn whose last answer ended it (stop, length, error, abort) is closed;
  // one that stopped after tool results was cut off: `repair` closes it.
  if (
    lastStop !== undefined && lastStop !== "toolUse" && b.turn !== undefined
  ) {
    const closed = closeTurn(b, 0, stopReasons[lastStop]);
    if (Result.isFailure(closed)) return Result.fail(closed.failure);
  }
  return Result.succeed({
    header: importedHeader(file, str(h.id), epochOf(h.timestamp), {
      tool: "pi",
      version,
      file: fileName(file),
      ...(h.id === undefined ? {} : { id: h.id }),
      ...(h.cwd === undefined ? {} : { cwd: h.cwd }),
      ...(h.branchedFrom === undefined ? {} : { branchedFrom: h.branchedFrom }),
      ...(h.parentSession === undefined
        ? {}
        : { parentSession: h.parentSession }),
    }),
    formatVersion: version,
    read: second.success,
  });
};

interface PiContext {
  readonly model: () => { provider: string; model: string };
  readonly stop: (s: string | undefined) => void;
}

const piMessage = (
  b: Builder,
  line: number,
  kind: string,
  id: string,
  m: Record<string, unknown>,
  ctx: PiContext,
): Step => {
  switch (m.role) {
    case "user": {
      const opened = userTurn(b, line);
      if (Result.isFailure(opened)) return opened;
      ctx.stop(undefined);
      const converted = convertBlocks(b, line, kind, m.content);
      return done(
        userMessage(b, line, id, converted.content, { kind: "user" }),
      );
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
      const fallback = ctx.model();
      const made = assistantMessage(b, line, id, converted.content, {
        provider: str(m.provider) ?? fallback.provider,
        model: str(m.model) ?? fallback.model,
        ...(m.usage === undefined ? {} : { usage: m.usage }),
        ...(stop === "aborted" ? { interrupted: true } : {}),
        stream,
      });
      if (Result.isFailure(made)) return Result.fail(made.failure);
      ctx.stop(stop);
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
