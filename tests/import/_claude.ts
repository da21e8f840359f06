/**
 * Records of a Claude Code transcript for the import tests: a user's message
 * and a model's text answer, each with what a test adds.
 *
 * @module
 */

/** A record's keys and values, as JSON gives them. */
type Fields = Record<string, unknown>;

/** A record of `type` and `uuid` holding `message`, with `extra` keys. */
const record = (
  type: "user" | "assistant",
  uuid: string,
  message: Fields,
  extra: Fields,
): Fields => ({ type, uuid, message, ...extra });

/** A Claude Code `user` record `uuid` saying `content`, with `extra` keys. */
export const claudeUser = (
  uuid: string,
  content: string,
  extra = {},
): Fields => record("user", uuid, { role: "user", content }, extra);

/**
 * A Claude Code `assistant` record `uuid`: message `m1` of model `m`
 * answering `text`, with `extra` keys.
 */
export const claudeAssistant = (
  uuid: string,
  text: string,
  extra = {},
): Fields =>
  record("assistant", uuid, {
    id: "m1",
    role: "assistant",
    model: "m",
    content: [{ type: "text", text }],
  }, extra);
