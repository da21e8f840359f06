/// <reference lib="dom" />
/**
 * The script of the browser test's chat page, bundled by the test for the
 * browser: the AI SDK's own chat (its `AbstractChat`, what `useChat`
 * wraps, with a state that redraws the page) over its
 * `DefaultChatTransport`. On load it resumes, as `useChat({ resume: true })`
 * does: the transport asks `GET /api/chat/<id>/stream`. The chat id is the
 * page's `?id=`.
 *
 * The page shows each message as `li.message[data-role]`, its text in
 * `.text`, an `.interrupted` mark when the answer's metadata says so, and
 * the chat's status in `#status`.
 *
 * @module
 */
import {
  AbstractChat,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  type UIMessage,
} from "ai";

const list = document.getElementById("messages");
const status = document.getElementById("status");
const form = document.getElementById("form");
const input = document.getElementById("input");

const isInterrupted = (message: UIMessage): boolean =>
  typeof message.metadata === "object" && message.metadata !== null &&
  Reflect.get(message.metadata, "interrupted") === true;

/** Redraws the page from the chat's state. */
const draw = (state: ChatState<UIMessage>): void => {
  if (list === null || status === null) return;
  status.textContent = state.status;
  list.replaceChildren(...state.messages.map((message) => {
    const item = document.createElement("li");
    item.className = "message";
    item.dataset.role = message.role;
    const who = document.createElement("b");
    who.textContent = message.role;
    const text = document.createElement("span");
    text.className = "text";
    text.textContent = message.parts.map((p) => p.type === "text" ? p.text : "")
      .join("");
    item.append(who, text);
    if (isInterrupted(message)) {
      const mark = document.createElement("em");
      mark.className = "interrupted";
      mark.textContent = "interrupted";
      item.append(mark);
    }
    return item;
  }));
};

/** A chat state that redraws the page on every change. */
const pageState = (): ChatState<UIMessage> => {
  let messages: UIMessage[] = [];
  let chatStatus: ChatStatus = "ready";
  let error: Error | undefined;
  const state: ChatState<UIMessage> = {
    get status() {
      return chatStatus;
    },
    set status(next) {
      chatStatus = next;
      draw(state);
    },
    get error() {
      return error;
    },
    set error(next) {
      error = next;
    },
    get messages() {
      return messages;
    },
    set messages(next) {
      messages = next;
      draw(state);
    },
    pushMessage: (message) => {
      messages = [...messages, message];
      draw(state);
    },
    popMessage: () => {
      messages = messages.slice(0, -1);
      draw(state);
    },
    replaceMessage: (index, message) => {
      messages = messages.map((m, i) => i === index ? message : m);
      draw(state);
    },
    snapshot: (thing) => structuredClone(thing),
  };
  return state;
};

class PageChat extends AbstractChat<UIMessage> {
  constructor(id: string) {
    super({
      id,
      state: pageState(),
      transport: new DefaultChatTransport({ api: "/api/chat" }),
    });
  }
}

const chat = new PageChat(
  new URLSearchParams(location.search).get("id") ?? "chat",
);
form?.addEventListener("submit", (event) => {
  event.preventDefault();
  if (!(input instanceof HTMLInputElement)) return;
  void chat.sendMessage({ text: input.value });
  input.value = "";
});
void chat.resumeStream();
