/**
 * One transcript that touches every mapping rule of the adapters: a system
 * head, user images and files of every shape, reasoning, two calls (one with
 * invalid JSON arguments and an id Anthropic refuses), a steering message
 * between a call and its result, a result with an image, an unanswered call,
 * a late system message and a final assistant answer with trailing space.
 */
import type { Message } from "@palimpsest/session";
import {
  fromModel,
  fromPlugin,
  fromTool,
  fromUser,
} from "../providers/_messages.ts";

/** A system message with one text block, set by the plugin `prompt`. */
const prompt = (id: string, text: string): Message =>
  fromPlugin(id, "prompt", text);

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
  fromModel("a1", [
    { type: "reasoning", text: "think" },
    { type: "text", text: "reading" },
    { type: "tool-call", id: "c.1", name: "read", arguments: '{"path":"a"}' },
    { type: "tool-call", id: "c2", name: "grep", arguments: "{bad" },
  ]),
  fromUser("u2", "hurry"),
  fromTool("r3", "c.1", [
    { type: "text", text: "contents" },
    { type: "image", attachment: "https://example.com/shot.png" },
  ]),
  prompt("s4", "now answer"),
  fromModel("a5", [{ type: "text", text: "done  " }]),
];
