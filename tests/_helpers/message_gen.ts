/**
 * Message lists for the adapter property tests: the derived messages of
 * generated logs at every cut (crashed and cut logs included), and hostile
 * hand-built lists (calls and results in the wrong places, duplicate ids,
 * invalid JSON arguments, attachments of every shape).
 */
import fc from "fast-check";
import {
  applyEventResult,
  deriveMessages,
  emptySurface,
  emptySurfaceAt,
  logEvent,
  type Message,
  SessionSeq,
  type Surface,
} from "@palimpsest/session";
import { Result } from "effect";
import { decoded } from "./build.ts";
import { type GeneratedLog, logArb } from "./log_gen.ts";
import { historySessionArb } from "./session_gen.ts";

/** The derived messages after each prefix of a folded event list. */
function cuts(
  from: Surface,
  events: ReadonlyArray<Parameters<typeof applyEventResult>[1]>,
): Array<ReadonlyArray<Message>> {
  const out: Array<ReadonlyArray<Message>> = [deriveMessages(from)];
  let surface = from;
  for (const event of events) {
    const next = applyEventResult(surface, event);
    if (Result.isFailure(next)) {
      throw new Error(`Generated log does not fold: ${next.failure._tag}`);
    }
    surface = next.success;
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

const ids = fc.constantFrom("c1", "c2", "c3", "c.4", "c 5");
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
      name: fc.constantFrom("read", "run"),
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
