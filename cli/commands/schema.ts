/**
 * `schema`: the JSON Schema (draft 2020-12) of a v3 event line, generated
 * from the effect Schemas, so that programs in other languages can validate
 * logs.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import { eventJsonSchema } from "@palimpsest/session/schema";
import { type Command, ExitCode } from "../outcome.ts";

/** The `schema` command. */
export const schemaCommand: Command = {
  spec: {
    name: "schema",
    summary: "print the JSON Schema of a v3 event line",
    description:
      "Prints the JSON Schema (draft 2020-12) of one v3 event line, as stored on disk.\n" +
      "Relational rules (dense seqs, replace ranges on the surface, cited sources)\n" +
      "are beyond JSON Schema: use verify for those.",
    positionals: [],
    options: [],
  },
  run: () =>
    Effect.sync(() => {
      const schema = eventJsonSchema();
      return {
        code: ExitCode.ok,
        json: schema,
        text: `${JSON.stringify(schema, null, 2)}\n`,
      };
    }),
};
