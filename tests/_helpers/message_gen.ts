/**
 * Message lists for the adapter property tests: the derived messages of
 * generated logs at every cut (crashed and cut logs included), the same with
 * call ids as other harnesses and providers write them and each cut also
 * crash-repaired, and hostile hand-built lists (calls and results in the
 * wrong places, duplicate and over-long ids, invalid JSON arguments,
 * attachments of every shape).
 */
import fc from "fast-check";
import {
  deriveMessages,
  emptySurface,
  type Message,
  type SessionEvent,
  SessionSeq,
  type Surface,
} from "@palimpsest/session";
import {
  applyEventResult,
  emptySurfaceAt,
  interruptedTurnClosers,
  logEvent,
} from "@palimpsest/session/internal";
import { Result } from "effect";
import { decoded } from "./build.ts";
import { type GeneratedLog, logArb } from "./log_gen.ts";
import { historySessionArb } from "./session_gen.ts";

/** One event folded onto a surface; a generated log that does not fold is a bug. */
const fold = (surface: Surface, event: SessionEvent): Surface => {
  const next = applyEventResult(surface, event);
  if (Result.isFailure(next)) {
    throw new Error(`Generated log does not fold: ${next.failure._tag}`);
  }
  return next.success;
};

/** The derived messages after each prefix of a folded event list. */
function cuts(
  from: Surface,
  events: ReadonlyArray<Parameters<typeof applyEventResult>[1]>,
): Array<ReadonlyArray<Message>> {
  const out: Array<ReadonlyArray<Message>> = [deriveMessages(from)];
  let surface = from;
  for (const event of events) {
    surface = fold(surface, event);
    out.push(deriveMessages(surface));
  }
  return out;
}

/** The messages of a generated log cut at every position. */
export const logCuts = (log: GeneratedLog): Array<ReadonlyArray<Message>> =>
  cuts(
    log.base === 0 ? emptySurface : emptySurfaceAt(SessionSeq.make(log.base)),
    log.lines.map((line) => decoded(line)),
  );

/** Message lists from generated raw logs, each cut at every position. */
export const logCutsArb: fc.Arbitrary<Array<ReadonlyArray<Message>>> = logArb(
  40,
).map(logCuts);

/** Message lists from generated sessions with history rewrites, cut everywhere. */
export const sessionCutsArb: fc.Arbitrary<Array<ReadonlyArray<Message>>> =
  historySessionArb.map((session) => {
    const events = [];
    for (let seq = 0; seq < session.surface.nextSeq; seq++) {
      const event = logEvent(session.surface, SessionSeq.make(seq));
      if (event !== undefined) events.push(event);
    }
    return cuts(emptySurface, events);
  });

/**
 * Call id styles: as the generators write them, and as other harnesses and
 * providers do (Anthropic's `toolu_…`, a Responses `call_…|fc_…` pair as
 * some harnesses store it, over 64 characters, and long ids that differ only
 * after their 64th character).
 */
export const CALL_ID_STYLES: ReadonlyArray<(id: string) => string> = [
  (id) => id,
  (id) => `toolu_01A09q90qw90lq917835lq9${id}`,
  (id) => `call_${id}_9aXfQk2LmZp0RtYv|fc_${"0b7e".repeat(12)}${id}`,
  (id) => `${"session-moved-between-harnesses.".repeat(3)}${id}`,
];

const renameCalls = (
  value: unknown,
  rename: (id: string) => string,
): unknown => {
  if (Array.isArray(value)) return value.map((v) => renameCalls(v, rename));
  if (typeof value !== "object" || value === null) return value;
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(record)) {
    const isId = key === "callId" || key === "toolCallId" ||
      (key === "id" && record.type === "tool-call");
    out[key] = isId && typeof v === "string"
      ? rename(v)
      : renameCalls(v, rename);
  }
  return out;
};

/** Events with every call id renamed (calls, results, sources, `tool/call`). */
export const withCallIds = (
  events: ReadonlyArray<SessionEvent>,
  rename: (id: string) => string,
): ReadonlyArray<SessionEvent> =>
  renameCalls(events, rename) as ReadonlyArray<SessionEvent>;

/**
 * The derived messages after each prefix of an event list and, where the
 * prefix leaves a turn open, of that prefix closed as the store's `repair`
 * closes a crashed log.
 */
export function cutsWithRepairs(
  from: Surface,
  events: ReadonlyArray<SessionEvent>,
): Array<ReadonlyArray<Message>> {
  const out: Array<ReadonlyArray<Message>> = [deriveMessages(from)];
  let surface = from;
  for (let i = 0; i < events.length; i++) {
    const event = events[i];
    if (event === undefined) continue;
    surface = fold(surface, event);
    out.push(deriveMessages(surface));
    const closers = interruptedTurnClosers(events.slice(0, i + 1));
    if (closers.length > 0) {
      out.push(deriveMessages(closers.reduce(fold, surface)));
    }
  }
  return out;
}

/**
 * Message lists from generated raw logs with call ids in one of
 * {@link CALL_ID_STYLES}, each cut at every position, crash-repaired too.
 */
export const foreignLogCutsArb: fc.Arbitrary<Array<ReadonlyArray<Message>>> = fc
  .tuple(logArb(40), fc.nat(CALL_ID_STYLES.length - 1)).map(
    ([log, style]) =>
      cutsWithRepairs(
        log.base === 0
          ? emptySurface
          : emptySurfaceAt(SessionSeq.make(log.base)),
        withCallIds(
          log.lines.map((line) => decoded(line)),
          CALL_ID_STYLES[style] ?? String,
        ),
      ),
  );

/**
 * Message lists from generated sessions with history rewrites and call ids
 * in one of {@link CALL_ID_STYLES}, cut at every position, crash-repaired
 * too.
 */
export const foreignSessionCutsArb: fc.Arbitrary<
  Array<ReadonlyArray<Message>>
> = fc.tuple(historySessionArb, fc.nat(CALL_ID_STYLES.length - 1)).map(
  ([session, style]) => {
    const events = [];
    for (let seq = 0; seq < session.surface.nextSeq; seq++) {
      const event = logEvent(session.surface, SessionSeq.make(seq));
      if (event !== undefined) events.push(event);
    }
    return cutsWithRepairs(
      emptySurface,
      withCallIds(events, CALL_ID_STYLES[style] ?? String),
    );
  },
);

const LONG = `call_${"x".repeat(64)}`;
// A tool name longer than Anthropic's 200 characters.
const NAME_201 = "n".repeat(201);
const ids = fc.constantFrom(
  "c1",
  "c2",
  "c3",
  "c.4",
  "c 5",
  `${LONG}6`,
  `${LONG}.7`,
);
const text = fc.oneof(
  fc.constant(""),
  fc.constant("  "),
  fc.string({ maxLength: 6 }),
);
const attachment = fc.oneof(
  fc.constant({ mediaType: "image/png", data: "iVBORw0KGgo=" }),
  fc.constant({
    mediaType: "application/pdf",
    data: "JVBERi0=",
    name: "a.pdf",
  }),
  fc.constant("https://example.com/x.png"),
  fc.constant({
    url: "https://example.com/doc.pdf",
    mediaType: "application/pdf",
  }),
  fc.constant("data:image/jpeg;base64,/9j/"),
  fc.constant({ path: "local.png" }),
  fc.constant(null),
);
const args = fc.constantFrom('{"a":1}', "{}", "", "{", "[1]", "3", "null");

const inner = fc.oneof(
  text.map((t) => ({ type: "text" as const, text: t })),
  attachment.map((a) => ({ type: "image" as const, attachment: a })),
  attachment.map((a) => ({ type: "file" as const, attachment: a })),
);

const block = fc.oneof(
  {
    weight: 3,
    arbitrary: text.map((t) => ({ type: "text" as const, text: t })),
  },
  {
    weight: 1,
    arbitrary: text.map((t) => ({ type: "reasoning" as const, text: t })),
  },
  {
    weight: 1,
    arbitrary: attachment.map((a) => ({
      type: "image" as const,
      attachment: a,
    })),
  },
  {
    weight: 1,
    arbitrary: attachment.map((a) => ({
      type: "file" as const,
      attachment: a,
    })),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant("tool-call" as const),
      id: ids,
      name: fc.constantFrom(
        "read",
        "run",
        "read",
        "run",
        "",
        "mcp.read",
        NAME_201,
      ),
      arguments: args,
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      type: fc.constant("tool-result" as const),
      toolCallId: ids,
      content: fc.array(inner, { maxLength: 2 }),
      isError: fc.boolean(),
    }),
  },
);

/** Hostile hand-built message lists: any block in any role, in any order. */
export const hostileMessagesArb: fc.Arbitrary<ReadonlyArray<Message>> = fc
  .array(
    fc.record({
      role: fc.constantFrom("system", "user", "user", "assistant", "assistant"),
      content: fc.array(block, { maxLength: 4 }),
    }),
    { maxLength: 12 },
  )
  .map((list) =>
    list.map((m, i): Message => ({
      id: `m${i}`,
      role: m.role,
      content: m.content,
      source: m.role === "assistant"
        ? { kind: "model", provider: "p", model: "m" }
        : { kind: "user" },
    }))
  );
