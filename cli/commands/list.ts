/**
 * `list ROOT|ADDRESS`: a page of a store's catalogue, as a table or as
 * JSON, filtered, searched, sorted and paged as `store.list(query)` does.
 *
 * @module
 */
import * as Effect from "effect/Effect";
import type {
  CatalogueEntry,
  ListFilter,
  ListOrderKey,
  ListQuery,
} from "@palimpsest/session";
import { redactAddress } from "../../src/store/redact.ts";
import {
  type Command,
  ExitCode,
  failureOutcome,
  okOutcome,
  storeOutcome,
} from "../outcome.ts";
import { onStore } from "../stores.ts";
import { flagOption, stringOption } from "../args.ts";

/** A usage error of an option's value. */
interface BadOption {
  readonly _tag: "BadOption";
  readonly message: string;
}

const ORDERS: ReadonlyArray<ListOrderKey> = ["updated", "created", "id"];

const splitList = (text: string | undefined): string[] | undefined =>
  text === undefined
    ? undefined
    : text.split(",").map((s) => s.trim()).filter((s) => s.length > 0);

/** The query the options ask for, or the option that is wrong. */
const queryOf = (
  values: ReadonlyMap<string, string>,
  flags: ReadonlySet<string>,
): ListQuery | BadOption => {
  const labels: { [key: string]: string } = {};
  for (const pair of splitList(values.get("label")) ?? []) {
    const at = pair.indexOf("=");
    if (at <= 0) {
      return {
        _tag: "BadOption",
        message: `Expected --label KEY=VALUE[,KEY=VALUE] but found ${
          JSON.stringify(pair)
        }`,
      };
    }
    labels[pair.slice(0, at)] = pair.slice(at + 1);
  }
  const order = values.get("order") ?? "updated";
  const by = ORDERS.find((o) => o === order);
  if (by === undefined) {
    return {
      _tag: "BadOption",
      message: `Expected --order to be updated, created or id but found ${
        JSON.stringify(order)
      }`,
    };
  }
  const limitText = values.get("limit");
  const limit = limitText === undefined ? undefined : Number(limitText);
  const tags = splitList(values.get("tag"));
  const cwd = values.get("cwd");
  const filter: ListFilter = {
    ...(tags === undefined ? {} : { tags }),
    ...(Object.keys(labels).length === 0 ? {} : { labels }),
    ...(cwd === undefined ? {} : { cwd }),
  };
  const search = values.get("search");
  const cursor = values.get("cursor");
  return {
    filter,
    order: { by, direction: flags.has("asc") ? "asc" : "desc" },
    ...(search === undefined ? {} : { search }),
    ...(cursor === undefined ? {} : { cursor }),
    ...(limit === undefined ? {} : { limit }),
  };
};

const isBad = (q: ListQuery | BadOption): q is BadOption => "_tag" in q;

const time = (ms: number): string =>
  Number.isFinite(ms) ? new Date(ms).toISOString().slice(0, 19) + "Z" : "-";

const cell = (text: string, width: number): string =>
  text.length > width ? `${text.slice(0, width - 1)}…` : text.padEnd(width);

/** The table of a page, one session a line. */
const table = (
  entries: ReadonlyArray<CatalogueEntry>,
  cursor: string | undefined,
): string[] => {
  const idWidth = Math.min(
    40,
    Math.max(2, ...entries.map((entry) => entry.id.length)),
  );
  const lines = [
    `${cell("ID", idWidth)}  ${cell("UPDATED", 20)}  ${cell("EVENTS", 6)}  ${
      cell("TITLE", 40)
    }  TAGS`,
  ];
  for (const entry of entries) {
    const title = entry.metadata.title ?? entry.firstText ?? "";
    lines.push(
      `${cell(entry.id, idWidth)}  ${cell(time(entry.updatedAt), 20)}  ${
        String(entry.events).padStart(6)
      }  ${cell(title.replaceAll("\n", " "), 40)}  ${
        entry.metadata.tags.join(",")
      }`,
    );
  }
  if (cursor !== undefined) lines.push(`more: --cursor ${cursor}`);
  return lines;
};

const jsonOf = (entry: CatalogueEntry) => ({
  id: entry.id,
  createdAt: entry.createdAt,
  updatedAt: entry.updatedAt,
  events: entry.events,
  title: entry.metadata.title ?? null,
  tags: entry.metadata.tags,
  labels: entry.metadata.labels,
  cwd: entry.metadata.cwd ?? null,
  values: entry.metadata.values,
  firstText: entry.firstText ?? null,
});

/** The `list` command. */
export const listCommand: Command = {
  spec: {
    name: "list",
    summary: "list the sessions of a store, with their titles and tags",
    description:
      "Prints a page of the sessions of a store (a JSONL folder, or\n" +
      "postgres://user@host:port/db): id, last change, events, title and tags,\n" +
      "the most recently changed first. --search looks in titles, tags and the\n" +
      "first user text; --tag, --label and --cwd keep the sessions that have\n" +
      "them; a page that is not the last ends with the --cursor of the next.",
    positionals: [
      { name: "ROOT", summary: "a store folder, or postgres://…" },
    ],
    options: [
      stringOption(
        "search",
        "TEXT",
        "keep sessions whose title, tags or first text has TEXT",
      ),
      stringOption(
        "tag",
        "TAG[,TAG]",
        "keep sessions with every one of these tags",
      ),
      stringOption("label", "K=V[,K=V]", "keep sessions with these labels"),
      stringOption("cwd", "DIR", "keep sessions with this working directory"),
      stringOption("order", "KEY", "sort on updated (default), created or id"),
      flagOption("asc", "oldest (or A) first"),
      stringOption("limit", "N", "sessions per page, 1 to 1000 (default 50)"),
      stringOption("cursor", "C", "the page after the one that printed C"),
    ],
  },
  run: (args) => {
    const where = args.positionals[0] ?? "";
    const query = queryOf(args.values, args.flags);
    if (isBad(query)) {
      return Effect.succeed(failureOutcome(ExitCode.usage, where, query));
    }
    return storeOutcome(
      where,
      onStore(where, (store) => store.list(query)),
      ({ sessions, cursor }) =>
        okOutcome(
          {
            store: redactAddress(where),
            sessions: sessions.map(jsonOf),
            cursor: cursor ?? null,
          },
          table(sessions, cursor),
        ),
    );
  },
};
