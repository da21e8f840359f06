/**
 * The oracles in `../shared/peer-logs/expected/`: the message list pi and
 * Codex themselves rebuild when they resume a session file, and the same
 * list read from an import's derived messages, in one comparable shape:
 * one item per message part (roles, texts, tool-call ids, arguments,
 * results, order).
 */
import type { Message, SessionEvent } from "@palimpsest/session";

/** One comparable item. */
export type Item =
  | {
    readonly k: "message";
    readonly role: string;
    readonly text: string;
    readonly images: number;
  }
  | { readonly k: "reasoning"; readonly text: string }
  | {
    readonly k: "call";
    readonly id: string;
    readonly name: string;
    readonly args: string;
  }
  | {
    readonly k: "output";
    readonly id: string;
    readonly text: string;
    readonly images: number;
  }
  | { readonly k: "opaque"; readonly item: unknown };

const rec = (u: unknown): Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)
    ? u as Record<string, unknown>
    : {};
const s = (u: unknown): string => typeof u === "string" ? u : "";

/** The text of Codex content parts, joined by newlines, and their image count. */
const textAndImages = (parts: ReadonlyArray<Record<string, unknown>>) => ({
  text: parts.filter((p) => typeof p.text === "string").map((p) => s(p.text))
    .join("\n"),
  images: parts.filter((p) => p.type === "input_image").length,
});

/** A Codex oracle's `prompt` as items. */
export const codexOracle = (prompt: ReadonlyArray<unknown>): Item[] =>
  prompt.map((u): Item => {
    const i = rec(u);
    switch (i.type) {
      case "message": {
        const parts = Array.isArray(i.content) ? i.content.map(rec) : [];
        return { k: "message", role: s(i.role), ...textAndImages(parts) };
      }
      case "reasoning": {
        const content = Array.isArray(i.content) ? i.content.map(rec) : [];
        const summary = Array.isArray(i.summary) ? i.summary.map(rec) : [];
        const raw = content.map((p) => s(p.text)).join("\n\n");
        return {
          k: "reasoning",
          text: raw !== "" ? raw : summary.map((p) => s(p.text)).join("\n\n"),
        };
      }
      case "function_call":
        return {
          k: "call",
          id: s(i.call_id),
          name: s(i.name),
          args: s(i.arguments),
        };
      case "custom_tool_call":
        return {
          k: "call",
          id: s(i.call_id),
          name: s(i.name),
          args: JSON.stringify(s(i.input)),
        };
      case "function_call_output":
      case "custom_tool_call_output": {
        const o = i.output;
        if (typeof o === "string") {
          return { k: "output", id: s(i.call_id), text: o, images: 0 };
        }
        const parts = Array.isArray(o) ? o.map(rec) : [];
        return { k: "output", id: s(i.call_id), ...textAndImages(parts) };
      }
      default:
        return { k: "opaque", item: i };
    }
  });

const texts = (m: Message): string =>
  m.content.flatMap((b) => b.type === "text" ? [b.text] : []).join("\n");

/** Derived messages as Codex items (the system head is the request's `instructions`). */
export const codexItems = (messages: ReadonlyArray<Message>): Item[] =>
  messages.flatMap((m): Item[] => {
    if (m.role === "system") return [];
    if (m.role === "assistant") {
      return m.content.flatMap((b): Item[] => {
        switch (b.type) {
          case "reasoning":
            return [{ k: "reasoning", text: b.text }];
          case "text":
            return [{
              k: "message",
              role: "assistant",
              text: b.text,
              images: 0,
            }];
          case "tool-call":
            return [{ k: "call", id: b.id, name: b.name, args: b.arguments }];
          default:
            return [];
        }
      });
    }
    const out: Item[] = [];
    for (const b of m.content) {
      if (b.type === "tool-result") {
        out.push({
          k: "output",
          id: b.toolCallId,
          text: b.content.flatMap((c) => c.type === "text" ? [c.text] : [])
            .join("\n"),
          images: b.content.filter((c) => c.type === "image").length,
        });
      }
      const item = rec(rec(b).opaque).item;
      if (item !== undefined) out.push({ k: "opaque", item });
    }
    const plugin = s(rec(m.source).plugin);
    const role = plugin === "codex/developer" ? "developer" : "user";
    const sent = m.content.some((b) =>
      (b.type === "text" && b.text !== "" && rec(b).opaque === undefined) ||
      b.type === "image"
    );
    if (sent) {
      out.unshift({
        k: "message",
        role,
        text: texts(m),
        images: m.content.filter((b) => b.type === "image").length,
      });
    }
    return out;
  });

/** A pi oracle's `messages` as items. */
export const piOracle = (messages: ReadonlyArray<unknown>): Item[] =>
  messages.flatMap((u): Item[] => {
    const m = rec(u);
    if (m.role === "user") {
      return [{
        k: "message",
        role: "user",
        text: s(m.text),
        images: Number(m.images ?? 0),
      }];
    }
    if (m.role === "toolResult") {
      return [{
        k: "output",
        id: s(m.id),
        text: s(m.text),
        images: Number(m.images ?? 0),
      }];
    }
    const out: Item[] = [];
    for (const t of (m.thinking as string[] | undefined) ?? []) {
      out.push({ k: "reasoning", text: t });
    }
    if (s(m.text) !== "") {
      out.push({ k: "message", role: "assistant", text: s(m.text), images: 0 });
    }
    const calls = (m.calls as string[] | undefined) ?? [];
    calls.forEach((id, i) =>
      out.push({
        k: "call",
        id,
        name: (m.names as string[])[i] ?? "",
        args: (m.args as string[])[i] ?? "",
      })
    );
    return out;
  });

/** Derived messages as pi items. */
export const piItems = (messages: ReadonlyArray<Message>): Item[] =>
  messages.flatMap((m): Item[] => {
    if (m.role === "assistant") {
      const out: Item[] = [];
      for (const b of m.content) {
        if (b.type === "reasoning") {
          out.push({ k: "reasoning", text: b.text });
        }
      }
      const text = m.content.flatMap((b) => b.type === "text" ? [b.text] : [])
        .join("");
      if (text !== "") {
        out.push({ k: "message", role: "assistant", text, images: 0 });
      }
      for (const b of m.content) {
        if (b.type === "tool-call") {
          out.push({ k: "call", id: b.id, name: b.name, args: b.arguments });
        }
      }
      return out;
    }
    const results = m.content.flatMap((b): Item[] =>
      b.type === "tool-result"
        ? [{
          k: "output",
          id: b.toolCallId,
          text: b.content.flatMap((c) => c.type === "text" ? [c.text] : [])
            .join("\n"),
          images: b.content.filter((c) => c.type === "image").length,
        }]
        : []
    );
    if (results.length > 0) return results;
    return [{
      k: "message",
      role: "user",
      text: m.content.flatMap((b) => b.type === "text" ? [b.text] : []).join(
        "\n",
      ),
      images: m.content.filter((b) => b.type === "image").length,
    }];
  });

/** The assistant events of an import, by message id. */
export const assistantEvents = (
  events: ReadonlyArray<SessionEvent>,
): Map<string, SessionEvent> => {
  const out = new Map<string, SessionEvent>();
  for (const e of events) {
    if (e.type === "assistant/message") out.set(e.data.message.id, e);
  }
  return out;
};

/** The first index where two item lists differ, and both lengths. */
export const firstDifference = (
  ours: ReadonlyArray<Item>,
  theirs: ReadonlyArray<Item>,
): { index: number; ours?: Item; theirs?: Item } | undefined => {
  const n = Math.max(ours.length, theirs.length);
  for (let i = 0; i < n; i++) {
    if (JSON.stringify(ours[i]) !== JSON.stringify(theirs[i])) {
      return {
        index: i,
        ...(ours[i] === undefined ? {} : { ours: ours[i] }),
        ...(theirs[i] === undefined ? {} : { theirs: theirs[i] }),
      };
    }
  }
  return undefined;
};

/**
 * Deliberate difference: a message logged between a call and its output is
 * placed after the outputs of the calls still open, so that the transcript
 * is paired (Codex sends it between them).
 */
export const messagesAfterOpenCalls = (items: ReadonlyArray<Item>): Item[] => {
  const out: Item[] = [];
  const open = new Set<string>();
  let held: Item[] = [];
  for (const item of items) {
    if (item.k === "message" && open.size > 0) {
      held.push(item);
      continue;
    }
    out.push(item);
    if (item.k === "call") open.add(item.id);
    if (item.k === "output") {
      open.delete(item.id);
      if (open.size === 0) {
        out.push(...held);
        held = [];
      }
    }
  }
  return [...out, ...held];
};
