/**
 * One transcript that touches every mapping rule of the adapters: a system
 * head, user images and files of every shape, reasoning, two calls (one with
 * invalid JSON arguments and an id Anthropic refuses), a steering message
 * between a call and its result, a result with an image, an unanswered call,
 * a late system message and a final assistant answer with trailing space.
 */
import type { Message } from "@palimpsest/session";

const model = { kind: "model", provider: "p", model: "m" } as const;

/** A system message with one text block, set by the plugin `prompt`. */
const prompt = (id: string, text: string): Message => ({
  id,
  role: "system",
  source: { kind: "plugin", plugin: "prompt" },
  content: [{ type: "text", text }],
});

/** The transcript. */
export const transcript: ReadonlyArray<Message> = [
  prompt("s", "be brief"),
  {
    id: "u0",
    role: "user",
    source: { kind: "user" },
    content: [
      { type: "text", text: "look" },
      { type: "image", attachment: { mediaType: "image/png", data: "iVBO" } },
      { type: "image", attachment: { mediaType: "image/bmp", data: "Qk0=" } },
      {
        type: "file",
        attachment: {
          mediaType: "application/pdf",
          data: "JVBE",
          name: "a.pdf",
        },
      },
      { type: "file", attachment: "https://example.com/b.pdf" },
      { type: "file", attachment: { path: "local.txt" } },
    ],
  },
  {
    id: "a1",
    role: "assistant",
    source: model,
    content: [
      { type: "reasoning", text: "think" },
      { type: "text", text: "reading" },
      { type: "tool-call", id: "c.1", name: "read", arguments: '{"path":"a"}' },
      { type: "tool-call", id: "c2", name: "grep", arguments: "{bad" },
    ],
  },
  {
    id: "u2",
    role: "user",
    source: { kind: "user" },
    content: [{ type: "text", text: "hurry" }],
  },
  {
    id: "r3",
    role: "user",
    source: { kind: "tool", callId: "c.1" },
    content: [{
      type: "tool-result",
      toolCallId: "c.1",
      content: [
        { type: "text", text: "contents" },
        { type: "image", attachment: "https://example.com/shot.png" },
      ],
    }],
  },
  prompt("s4", "now answer"),
  {
    id: "a5",
    role: "assistant",
    source: model,
    content: [{ type: "text", text: "done  " }],
  },
];
