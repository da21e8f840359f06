/**
 * Records of a Claude Code transcript for the import tests: a user's message
 * and a model's text answer, each with what a test adds.
 *
 * @module
 */

/** A Claude Code `user` record `uuid` saying `content`, with `extra` keys. */
export const claudeUser = (
  uuid: string,
  content: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({
  type: "user",
  uuid,
  message: { role: "user", content },
  ...extra,
});

/**
 * A Claude Code `assistant` record `uuid`: message `m1` of model `m`
 * answering `text`, with `extra` keys.
 */
export const claudeAssistant = (
  uuid: string,
  text: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> => ({
  type: "assistant",
  uuid,
  message: {
    id: "m1",
    role: "assistant",
    model: "m",
    content: [{ type: "text", text }],
  },
  ...extra,
});
