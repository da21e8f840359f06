/**
 * What opencode sends to the model for an `opencode export` document, as
 * {@link Item}s, written from opencode's `MessageV2.toModelMessages` and the
 * AI SDK's `convertToModelMessages` independently of the importer: messages
 * and parts in id order; a user message's text (not `ignored`); an
 * assistant message (left out when it ended in an error other than an abort
 * with content) cut into blocks at `step-start`, each block its reasoning,
 * text and calls in part order, then one output per tool part in the same
 * order (`completed`: the output, or the pruned marker; `error`: the error
 * text; `pending`/`running`: `[Tool execution was interrupted]`). Of a
 * session compacted, only what follows the last compaction whose summary
 * completed (`filterCompacted`): its question, the summary and on.
 */
import type { Item } from "./_oracle.ts";

type Rec = Record<string, unknown>;

const rec = (u: unknown): Rec =>
  typeof u === "object" && u !== null && !Array.isArray(u) ? u as Rec : {};
const s = (u: unknown): string => typeof u === "string" ? u : "";
const byId = (a: Rec, b: Rec): number =>
  s(a.id) < s(b.id) ? -1 : s(a.id) > s(b.id) ? 1 : 0;

/** The items opencode sends next for an export document. */
export const opencodeOracle = (doc: unknown): Item[] => {
  const messages =
    (Array.isArray(rec(doc).messages) ? (rec(doc).messages as unknown[]) : [])
      .map((m) => ({
        info: rec(rec(m).info),
        parts: (Array.isArray(rec(m).parts) ? rec(m).parts as unknown[] : [])
          .map(rec).sort(byId),
      })).sort((a, b) => byId(a.info, b.info));
  const completed = new Set(
    messages.filter((m) =>
      m.info.role === "assistant" && m.info.summary === true &&
      m.info.finish !== undefined && m.info.error === undefined
    ).map((m) => s(m.info.parentID)),
  );
  const from = messages.findLastIndex((m) =>
    m.info.role === "user" && completed.has(s(m.info.id)) &&
    m.parts.some((p) => p.type === "compaction")
  );
  const out: Item[] = [];
  for (const m of messages.slice(Math.max(0, from))) {
    if (m.parts.length === 0) continue;
    if (m.info.role === "user") {
      const texts = m.parts.flatMap((p) =>
        p.type === "text" && !p.ignored
          ? [s(p.text)]
          : p.type === "compaction"
          ? ["What did we do so far?"]
          : p.type === "subtask"
          ? ["The following tool was executed by the user"]
          : []
      );
      out.push({
        k: "message",
        role: "user",
        text: texts.join("\n"),
        images: 0,
      });
      continue;
    }
    const error = m.info.error;
    if (
      error !== undefined &&
      !(rec(error).name === "MessageAbortedError" &&
        m.parts.some((p) => p.type !== "step-start" && p.type !== "reasoning"))
    ) continue;
    let block: Rec[] = [];
    const flush = () => {
      for (const p of block) {
        if (p.type === "reasoning") {
          out.push({ k: "reasoning", text: s(p.text) });
        }
        if (p.type === "text") {
          out.push({
            k: "message",
            role: "assistant",
            text: s(p.text),
            images: 0,
          });
        }
        if (p.type === "tool") {
          out.push({
            k: "call",
            id: s(p.callID),
            name: s(p.tool),
            args: JSON.stringify(rec(p.state).input ?? {}),
          });
        }
      }
      for (const p of block) {
        if (p.type !== "tool") continue;
        const state = rec(p.state);
        const text = state.status === "completed"
          ? rec(state.time).compacted !== undefined
            ? "[Old tool result content cleared]"
            : s(state.output)
          : state.status === "error"
          ? s(state.error)
          : "[Tool execution was interrupted]";
        out.push({ k: "output", id: s(p.callID), text, images: 0 });
      }
      block = [];
    };
    for (const p of m.parts) {
      if (p.type === "step-start") flush();
      block.push(p);
    }
    flush();
  }
  return out;
};
