/**
 * The OpenAI Agents SDK's items and the session log: {@link itemDrafts}
 * turns a batch of `AgentInputItem`s into event drafts, and
 * {@link itemsOfMessage} reads a derived message back as items.
 *
 * Every message the session writes keeps the items it came from, exactly
 * as given, under {@link ITEMS_KEY} (a message may carry keys beyond the
 * ones the format lists; they are kept as they are), so what the SDK stored
 * is what it reads back, its ids and `providerData` included. A message the
 * library wrote itself (a compaction summary, a synthetic result of the
 * pairing pass) or an imported one has no such key and is converted from
 * its blocks.
 *
 * Items of a kind the log has no block for (reasoning, hosted tool calls,
 * computer, shell and patch calls, compaction items, unknown items) are
 * kept opaque: they ride on an assistant message (reasoning as a
 * `reasoning` block, the rest with an empty one, so that no message is
 * derived empty), so the model sees them again
 * and every other reader skips them.
 *
 * @module
 */
import type {
  AgentInputItem,
  FunctionCallItem,
  FunctionCallResultItem,
} from "@openai/agents";
import type { ContentBlock, Message } from "../core/message.ts";
import type { SessionEvent, ToolCallEvent } from "../core/event.ts";
import type { EventDraft } from "../session/session.ts";
import { SessionSeq } from "../core/seq.ts";
import { Draft } from "../session/drafts.ts";

/** The message key that holds the items a message was written from. */
export const ITEMS_KEY = "openaiAgentsItems";

/**
 * The plugin name of the empty `user/message` that carries a rewind when
 * no user message of the SDK's can (a `popItem` or `clearSession`): it
 * derives no item.
 */
export const MARKER_PLUGIN = "openai-agents/rewind";

/** Where the drafts of a batch start and what they are tagged with. */
export interface DraftContext {
  /** The seq the first draft will get. */
  readonly nextSeq: number;
  /** The provider named on assistant messages. */
  readonly provider: string;
  /** The model named on assistant messages. */
  readonly model: string;
  /** Finds the `tool/call` event of a call id written before the batch. */
  readonly callEvent: (callId: string) => ToolCallEvent | undefined;
}

/** An item batch that cannot be written, and why. */
export interface ItemProblem {
  /** The index of the item in the batch. */
  readonly index: number;
  /** What is wrong. */
  readonly reason: "unknown-call";
  /** The call id, for a result whose call is not in the session. */
  readonly callId: string;
}

type AssistantPart = {
  readonly items: AgentInputItem[];
  readonly blocks: ContentBlock[];
};

const isObject = (value: unknown): value is object =>
  typeof value === "object" && value !== null;

/** Whether `value` is an array of items (objects with a `type` or `role`). */
const isItemArray = (value: unknown): value is AgentInputItem[] =>
  Array.isArray(value) &&
  value.every((item) => isObject(item) && ("type" in item || "role" in item));

/** The items a message was written from, when it keeps them. */
export const storedItems = (
  message: Message,
): ReadonlyArray<AgentInputItem> | undefined => {
  const items: unknown = Reflect.get(message, ITEMS_KEY);
  return isItemArray(items) ? items : undefined;
};

/** Whether a message is a rewind marker (it derives no item). */
export const isMarker = (message: Message): boolean =>
  message.role === "user" && message.content.length === 0 &&
  message.source.kind === "plugin" &&
  Reflect.get(message.source, "plugin") === MARKER_PLUGIN;

const textOf = (value: unknown): string =>
  isObject(value) && "text" in value && typeof value.text === "string"
    ? value.text
    : "";

/** The blocks of a user message's content. */
const userBlocks = (
  content: Extract<AgentInputItem, { role: "user" }>["content"],
): ContentBlock[] => {
  if (typeof content === "string") return [{ type: "text", text: content }];
  const out: ContentBlock[] = [];
  for (const part of content) {
    if (part.type === "input_text") out.push({ type: "text", text: part.text });
    else if (part.type === "input_image") {
      out.push({ type: "image", attachment: part.image ?? null });
    } else if (part.type === "input_file") {
      out.push({ type: "file", attachment: part.file ?? null });
    }
  }
  return out;
};

/** The text a function call's output carries, for other readers. */
const outputText = (output: FunctionCallResultItem["output"]): string => {
  if (typeof output === "string") return output;
  if (Array.isArray(output)) return output.map(textOf).join("");
  return output.type === "text" ? output.text : JSON.stringify(output);
};

/** Whether an item is one the model produced (it goes on an assistant message). */
const isModelItem = (item: AgentInputItem): boolean =>
  !("role" in item && (item.role === "user" || item.role === "system")) &&
  item.type !== "function_call_result";

const withItems = <T extends object>(
  data: T,
  items: ReadonlyArray<AgentInputItem>,
): T => {
  // Spread, not a literal key: the message types list the format's keys
  // only, and this one rides beside them.
  const extra = { [ITEMS_KEY]: items };
  return { ...data, ...extra };
};

/** The blocks an item the model produced adds to its assistant message. */
const modelBlocks = (item: AgentInputItem): ContentBlock[] => {
  if ("role" in item && item.role === "assistant") {
    const blocks = item.content.flatMap((part): ContentBlock[] =>
      part.type === "output_text"
        ? [{ type: "text", text: part.text }]
        : part.type === "refusal"
        ? [{ type: "text", text: part.refusal }]
        : []
    );
    return blocks.length > 0 ? blocks : [{ type: "reasoning", text: "" }];
  }
  if (item.type === "function_call") {
    return [{
      type: "tool-call",
      id: item.callId,
      name: item.name,
      arguments: item.arguments,
    }];
  }
  if (item.type === "reasoning") {
    const text = item.content.map((part) => part.text).join("\n");
    return [{ type: "reasoning", text }];
  }
  // An empty reasoning block keeps the message from being skipped as empty
  // when derived; every provider converter leaves reasoning out.
  return [{ type: "reasoning", text: "" }];
};

/**
 * The drafts of a batch of items: a user item is a `user/message`, a
 * system item a `system/message`, each run of items the model produced
 * (messages, function calls, reasoning, other calls) one
 * `assistant/message` with a `tool/call` record per function call, and a
 * function call's result a `tool/result` citing its call's record (in the
 * batch or before it). Message ids are `item-<seq>`.
 *
 * @param items The items, in order.
 * @param context Where the batch starts, the model's names and the calls
 * written before.
 * @returns The drafts, or the first item that cannot be written.
 */
export function itemDrafts(
  items: ReadonlyArray<AgentInputItem>,
  context: DraftContext,
): ReadonlyArray<EventDraft> | ItemProblem {
  const drafts: EventDraft[] = [];
  const calls = new Map<string, ToolCallEvent>();
  let run: AssistantPart | undefined;
  const seqOf = (): number => context.nextSeq + drafts.length;
  const flush = (): void => {
    if (run === undefined) return;
    const at = seqOf();
    const blocks = run.blocks;
    drafts.push({
      type: "assistant/message",
      surfaceOp: "append",
      data: {
        turn: 0,
        step: 0,
        message: withItems({
          id: `item-${at}`,
          role: "assistant",
          content: blocks,
          source: {
            kind: "model",
            provider: context.provider,
            model: context.model,
          },
        }, run.items),
        stream: [],
      },
    });
    for (const block of blocks) {
      if (block.type !== "tool-call") continue;
      const data = {
        turn: 0,
        step: 0,
        callId: block.id,
        name: block.name,
        arguments: block.arguments,
      };
      calls.set(block.id, {
        type: "tool/call",
        seq: SessionSeq.make(seqOf()),
        time: 0,
        data,
      });
      drafts.push({ type: "tool/call", data });
    }
    run = undefined;
  };
  for (const [index, item] of items.entries()) {
    if (isModelItem(item)) {
      run ??= { items: [], blocks: [] };
      run.items.push(item);
      run.blocks.push(...modelBlocks(item));
      continue;
    }
    flush();
    const id = `item-${seqOf()}`;
    if (item.type === "function_call_result") {
      const call = calls.get(item.callId) ?? context.callEvent(item.callId);
      if (call === undefined) {
        return { index, reason: "unknown-call", callId: item.callId };
      }
      const draft = Draft.toolResult(call, outputText(item.output), { id });
      drafts.push({
        ...draft,
        data: {
          ...draft.data,
          message: withItems(draft.data.message, [item]),
        },
      });
    } else if ("role" in item && item.role === "system") {
      drafts.push({
        type: "system/message",
        surfaceOp: "append",
        data: {
          turn: 0,
          step: 0,
          message: withItems({
            id,
            role: "system",
            content: [{ type: "text", text: item.content }],
            source: { kind: "plugin", plugin: "openai-agents" },
          }, [item]),
        },
      });
    } else if ("role" in item && item.role === "user") {
      drafts.push(userDraft(item, id));
    }
  }
  flush();
  return drafts;
}

/** A user item. */
export type UserItem = Extract<AgentInputItem, { role: "user" }>;

/** Whether an item is a user message. */
export const isUserItem = (item: AgentInputItem): item is UserItem =>
  "role" in item && item.role === "user";

/**
 * The `user/message` draft of a user item.
 *
 * @param item The item.
 * @param id The message id.
 * @returns The draft.
 */
export const userDraft = (
  item: UserItem,
  id: string,
): Extract<EventDraft, { type: "user/message" }> => ({
  type: "user/message",
  surfaceOp: "append",
  data: withItems({
    id,
    role: "user",
    content: userBlocks(item.content),
    source: { kind: "user" },
  }, [item]),
});

/** The `tool/call` event of `callId` at or before the session's tip. */
export const findCall = (
  events: (seq: number) => SessionEvent | undefined,
  from: number,
  to: number,
  callId: string,
): ToolCallEvent | undefined => {
  for (let at = to - 1; at >= from; at--) {
    const event = events(at);
    if (event?.type === "tool/call" && event.data.callId === callId) {
      return event;
    }
  }
  return undefined;
};

/**
 * A derived message as items: the items it was written from when it keeps
 * them, else items built from its blocks (reasoning and attachments the
 * SDK cannot replay are left out). `names` gives the tool name of a call
 * id, for results.
 *
 * @param message A derived message.
 * @param names The tool name of each call id seen so far.
 * @returns Its items, in order; none for a rewind marker.
 */
export function itemsOfMessage(
  message: Message,
  names: ReadonlyMap<string, string>,
): ReadonlyArray<AgentInputItem> {
  if (isMarker(message)) return [];
  const stored = storedItems(message);
  if (stored !== undefined) return stored;
  const text = message.content.flatMap((b) => b.type === "text" ? [b.text] : [])
    .join("\n");
  if (message.role === "system") {
    return text === "" ? [] : [{ role: "system", content: text }];
  }
  if (message.role === "assistant") {
    const out: AgentInputItem[] = [];
    if (text !== "") {
      out.push({
        type: "message",
        role: "assistant",
        status: "completed",
        // The Responses schema requires both on an output text; the SDK
        // sends a part's `providerData` keys as the part's own.
        content: [{
          type: "output_text",
          text,
          providerData: { annotations: [], logprobs: [] },
        }],
      });
    }
    for (const block of message.content) {
      if (block.type !== "tool-call") continue;
      const call: FunctionCallItem = {
        type: "function_call",
        callId: block.id,
        name: block.name,
        arguments: block.arguments === "" ? "{}" : block.arguments,
        status: "completed",
      };
      out.push(call);
    }
    return out;
  }
  const out: AgentInputItem[] = [];
  for (const block of message.content) {
    if (block.type !== "tool-result") continue;
    out.push({
      type: "function_call_result",
      callId: block.toolCallId,
      name: names.get(block.toolCallId) ?? "",
      status: "completed",
      output: block.content.flatMap((c) => c.type === "text" ? [c.text] : [])
        .join(""),
    });
  }
  if (text !== "") {
    out.push({ role: "user", content: [{ type: "input_text", text }] });
  }
  return out;
}
