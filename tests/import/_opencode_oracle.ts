/**
 * What opencode sends to the model for an `opencode export` document, as
 * {@link Item}s, written from opencode's `MessageV2.toModelMessages` and the
 * AI SDK's `convertToModelMessages` independently of the importer: messages
 * and parts in id order; a user message's text (not `ignored`); an
 * assistant message (left out when it ended in an error other than an abort
 * with content) cut into blocks at `step-start`, each block its reasoning,
 * text and calls in part order, then one output per tool part in the same
 * order (`completed`: the output, or the pruned marker; `error`: the error
 * text; `pending`/`running`: `[Tool execution was interrupted]`).
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
  const out: Item[] = [];
  for (const m of messages) {
    if (m.parts.length === 0) continue;
    if (m.info.role === "user") {
      const texts = m.parts.filter((p) => p.type === "text" && !p.ignored)
        .map((p) => s(p.text));
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
