/**
 * The page: header, stats, the size chart, notices, and the surface as the
 * model sees it, each replacement holding what it shadowed in a closed
 * `<details>` (recursively: a summary of a summary opens onto the first
 * summary, which opens onto what it replaced). Everything is written as it
 * is produced, in chunks, so a log of a million events never becomes one
 * string unless the caller asks for one.
 *
 * Each surface event of the log is drawn exactly once: on the surface, or
 * inside the replacement that shadowed it. Nesting deeper than
 * {@link MAX_DEPTH} replacements continues in a "deeper history" section at
 * the end of the page (browsers flatten elements nested more than a few
 * hundred deep), linked from where it would have been.
 *
 * @module
 */
import { createHash } from "node:crypto";
import type { ContentBlock, Message } from "../core/message.ts";
import {
  eventTypeName,
  isSurfaceEvent,
  type SessionEvent,
  type SurfaceEvent,
} from "../core/event.ts";
import { projectEvent } from "../surface/project.ts";
import * as Result from "effect/Result";
import { eventsFrom, knownEventAt, type Session } from "../session/session.ts";
import type { PartialAnswer } from "../session/partial.ts";
import type { EventsNotHeld } from "../core/errors.ts";
import { SessionSeq } from "../core/seq.ts";
import { surfaceNodes } from "../surface/mod.ts";
import {
  analyse,
  type Analysis,
  type Interruption,
  messageOf,
  type Replacement,
} from "./analyse.ts";
import { sizeChart } from "./chart.ts";
import { type Branch, branchesOf, branchTree } from "../history/rewind.ts";
import {
  compactionsIn,
  describeDropped,
  type LoggedCompaction,
} from "../history/dropped.ts";
import { escapeHtml as esc } from "./escape.ts";
import {
  cutAt,
  formatCount,
  isoTime,
  json,
  plural,
  savedText,
} from "./format.ts";
import { HEAD_SCRIPT, PAGE_SCRIPT, PAGE_STYLE } from "./assets.ts";

/** Replacements nested deeper than this continue at the end of the page. */
export const MAX_DEPTH = 24;

/** A surface longer than twice this comes in closed groups this long. */
const GROUP = 500;
/** Texts longer than this show their start and fold the rest. */
const LONG_TEXT = 1600;
/** How much of a long text shows before the fold. */
const TEXT_HEAD = 600;
/** The most entries a notice list shows. */
const NOTICE_LIMIT = 40;
/** Buckets of the size series (the chart's columns). */
const BUCKETS = 600;
/** Flush the buffer to the caller past this many UTF-16 units. */
const CHUNK = 1 << 16;

/** Options of the page. */
export interface ViewOptions {
  /** The page title; the session id by default. */
  readonly title?: string;
  /** The format version the log was read from (shown when older). */
  readonly version?: number;
  /** The torn final line the reader reported, shown as a notice. */
  readonly tornTail?: { readonly offset: number; readonly bytes: number };
}

const sha256 = (text: string): string =>
  createHash("sha256").update(text, "utf8").digest("base64");

let policy: string | undefined;
/** The page's Content-Security-Policy: nothing but its own style and script. */
const contentPolicy = (): string => {
  policy ??= [
    "default-src 'none'",
    `style-src 'sha256-${sha256(PAGE_STYLE)}'`,
    `script-src 'sha256-${sha256(HEAD_SCRIPT)}' 'sha256-${
      sha256(PAGE_SCRIPT)
    }'`,
    "img-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
  ].join("; ");
  return policy;
};

/** The role shown for each surface type (a tool result is user-role). */
const ROLE_OF: Readonly<Record<SurfaceEvent["type"], string>> = {
  "system/message": "system",
  "user/message": "user",
  "assistant/message": "assistant",
  "tool/result": "tool",
};

const KIND_LABEL: Readonly<Record<Replacement["kind"], string>> = {
  "compaction": "Compaction",
  "prune": "Pruned result",
  "system-prompt": "System prompt change",
  "rewind": "Rewind",
};

/** Writes the page in chunks. */
class Writer {
  #parts: string[] = [];
  #size = 0;
  readonly #sink: (chunk: string) => void;
  constructor(sink: (chunk: string) => void) {
    this.#sink = sink;
  }
  put(text: string): void {
    this.#parts.push(text);
    this.#size += text.length;
    if (this.#size >= CHUNK) this.flush();
  }
  flush(): void {
    if (this.#parts.length === 0) return;
    this.#sink(this.#parts.join(""));
    this.#parts = [];
    this.#size = 0;
  }
}

/** The page's parts, in order, for one session. */
class Page {
  readonly #w: Writer;
  readonly #session: Session;
  readonly #a: Analysis;
  readonly #after: Map<number, Interruption[]>;
  readonly #deferred: number[] = [];
  /**
   * The events drawn so far: a rewind takes off replacements whose
   * shadowed nodes it brought back (drawn on the surface already), and a
   * node two replacements shadowed, on two branches, is drawn in the first.
   */
  readonly #drawn = new Set<number>();
  constructor(w: Writer, session: Session, analysis: Analysis) {
    this.#w = w;
    this.#session = session;
    this.#a = analysis;
    this.#after = new Map();
    for (const i of analysis.interruptions) {
      if (i.after === undefined) continue;
      const list = this.#after.get(i.after) ?? [];
      list.push(i);
      this.#after.set(i.after, list);
    }
  }

  #event(seq: number): SessionEvent | undefined {
    return knownEventAt(this.#session, SessionSeq.make(seq));
  }

  #link(seq: number): string {
    const event = this.#event(seq);
    const type = event === undefined
      ? "not in this log"
      : esc(eventTypeName(event));
    return event !== undefined && isSurfaceEvent(event)
      ? `<a href="#e${seq}">#${seq}</a> ${type}`
      : `#${seq} ${type}`;
  }

  text(text: string, cls = "tx"): void {
    const w = this.#w;
    if (text.length <= LONG_TEXT) {
      w.put(`<div class="${cls}">${esc(text)}</div>`);
      return;
    }
    const cut = cutAt(text, TEXT_HEAD);
    w.put(
      `<div class="${cls}">${
        esc(text.slice(0, cut))
      }</div><details class="more"><summary>${
        formatCount(text.length - cut)
      } more characters</summary><div class="${cls}">${
        esc(text.slice(cut))
      }</div></details>`,
    );
  }

  block(block: ContentBlock): void {
    const w = this.#w;
    switch (block.type) {
      case "text":
        this.text(block.text);
        return;
      case "reasoning":
        w.put(
          `<details class="rs"><summary>reasoning · ${
            plural(block.text.length, "character")
          }</summary>`,
        );
        this.text(block.text);
        w.put(`</details>`);
        return;
      case "tool-call":
        w.put(
          `<div class="tc">call <b>${esc(block.name)}</b> ${esc(block.id)}`,
        );
        this.text(block.arguments, "ar");
        w.put(`</div>`);
        return;
      case "tool-result": {
        const error = block.isError === true;
        const only = block.content[0];
        // The common case, one short text, needs no frame of its own.
        if (
          !error && block.content.length === 1 && only?.type === "text" &&
          only.text.length <= LONG_TEXT
        ) {
          w.put(`<div class="tx trs">${esc(only.text)}</div>`);
          return;
        }
        w.put(`<div class="trs${error ? " err" : ""}">`);
        if (error) w.put(`<b>error</b> `);
        for (const inner of block.content) {
          if (inner.type === "text") this.text(inner.text);
          else {
            w.put(
              `<div class="at">[${inner.type}] ${
                esc(json(inner.attachment, 200))
              }</div>`,
            );
          }
        }
        w.put(`</div>`);
        return;
      }
      case "image":
      case "file":
        w.put(
          `<div class="at">[${block.type}] ${
            esc(json(block.attachment, 200))
          }</div>`,
        );
        return;
    }
  }

  #source(message: Message): string {
    const s = message.source;
    switch (s.kind) {
      case "model":
        return "provider" in s && "model" in s
          ? `${esc(String(s.provider))}/${esc(String(s.model))}`
          : "model";
      case "plugin":
        return "plugin" in s ? `plugin ${esc(String(s.plugin))}` : "plugin";
      case "tool":
        return "callId" in s ? `result for ${esc(String(s.callId))}` : "tool";
      default:
        return esc(s.kind);
    }
  }

  /**
   * One surface event and, folded, what it shadowed. The markup is kept
   * lean (a big log draws tens of thousands of these): the role is a
   * class, the type follows from the role.
   */
  node(seq: number, depth: number): void {
    const w = this.#w;
    const event = this.#event(seq);
    if (event === undefined || !isSurfaceEvent(event)) return;
    if (this.#drawn.has(seq)) return;
    this.#drawn.add(seq);
    const a = this.#a;
    const message = messageOf(event);
    const rep = a.replacements.get(seq);
    const repaired = a.repairs.has(seq);
    const interrupted = event.type === "assistant/message" &&
      event.data.interrupted === true;
    const empty = projectEvent(event) === undefined;
    const role = ROLE_OF[event.type];
    let cls = `m ${role}`;
    if (rep !== undefined) cls += ` rp ${rep.kind}`;
    if (repaired) cls += " fx";
    if (interrupted) cls += " ir";
    if (empty) cls += " em";
    w.put(
      `<li class="${cls}" id="e${seq}"><p class="h"><b>${role}</b> <a href="#e${seq}">#${seq}</a> · ${
        // A user's own message needs no source beside its role.
        message.source.kind === "user" ? "" : `${this.#source(message)} · `}${
        plural(a.charsOf(seq), "char")
      }`,
    );
    const sources = event.type === "assistant/message"
      ? undefined
      : event.sourceEventSeqs;
    if (rep === undefined && sources !== undefined) {
      w.put(` · cites ${sources.map((s) => this.#link(s)).join(", ")}`);
    }
    if (rep?.kind === "prune") {
      w.put(
        ` <i class="bd prune">pruned ${formatCount(rep.charsBefore)} → ${
          formatCount(rep.charsAfter)
        } chars</i>`,
      );
    } else if (rep !== undefined) {
      w.put(
        ` <i class="bd ${rep.kind}">${KIND_LABEL[rep.kind].toLowerCase()}</i>`,
      );
    }
    if (repaired) w.put(` <i class="bd fx">crash repair</i>`);
    if (interrupted) w.put(` <i class="bd ir">interrupted</i>`);
    w.put(`</p>`);
    if (empty) {
      w.put(
        `<div class="none">(empty content: this node derives no message)</div>`,
      );
    } else {
      for (const block of message.content) this.block(block);
    }
    if (rep !== undefined) this.#replacement(rep, sources ?? [], depth);
    for (const i of this.#after.get(seq) ?? []) {
      w.put(
        `<div class="note ir">Turn ${i.turn} was interrupted: closed by #${i.seq} turn/end</div>`,
      );
      if (i.partial !== undefined) this.#partial(i.partial);
    }
    w.put(`</li>`);
  }

  /** What a cut answer had streamed: shown, marked as never sent. */
  #partial(answer: PartialAnswer): void {
    const w = this.#w;
    w.put(
      `<div class="note ir pa">Partial answer (${
        answer.seqs.map((s) => `#${s}`).join(", ")
      }), cut while it streamed; not sent to the model:</div>`,
    );
    for (const block of answer.content) this.block(block);
    for (const call of answer.calls) {
      w.put(
        `<div class="at">[${
          call.complete
            ? "call, not run"
            : "call cut while its arguments streamed"
        }] ${esc(call.name)} ${esc(call.arguments)}</div>`,
      );
    }
  }

  #replacement(
    rep: Replacement,
    sources: ReadonlyArray<number>,
    depth: number,
  ): void {
    const w = this.#w;
    const shadowed = new Set(rep.shadowed);
    const other = sources.filter((s) => !shadowed.has(s));
    w.put(
      `<details class="sh"><summary>${KIND_LABEL[rep.kind]}: ${
        rep.kind === "rewind" ? "takes off" : "replaces"
      } ${plural(rep.shadowed.length, "node")} · ${
        formatCount(rep.charsBefore)
      } → ${
        formatCount(rep.charsAfter)
      } characters</summary><div class="lin">Lineage: stands for ${
        rep.shadowed.map((s) => `<a href="#e${s}">#${s}</a>`).join(", ")
      }${
        other.length === 0
          ? ""
          : `; also cites ${other.map((s) => this.#link(s)).join(", ")}`
      }${
        rep.kind === "compaction" || rep.kind === "prune"
          ? ` · <a href="#d${rep.seq}">what it dropped</a>`
          : ""
      }</div>`,
    );
    if (depth < MAX_DEPTH) {
      w.put(`<ol class="shl">`);
      for (const s of rep.shadowed) this.node(s, depth + 1);
      w.put(`</ol>`);
    } else {
      this.#deferred.push(rep.seq);
      w.put(
        `<p class="deep">Continued in <a href="#x${rep.seq}">deeper history</a>.</p>`,
      );
    }
    w.put(`</details>`);
  }

  surface(): void {
    const w = this.#w;
    const nodes = surfaceNodes(this.#session.surface);
    w.put(
      `<main><h2>The surface, as the model sees it</h2><p class="sub">${
        plural(nodes.length, "node")
      } in the order they are sent. A replacement shows what it shadowed one click away.</p><div id="tools" class="tools" hidden><button type="button" data-act="open">Open all history</button> <button type="button" data-act="close">Close all</button></div><p class="loading">Loading ${
        plural(nodes.length, "node")
      }…</p><ol class="sf" id="sf">`,
    );
    if (nodes.length <= GROUP * 2) {
      for (const seq of nodes) this.node(seq, 0);
    } else {
      // A long surface comes in closed groups (the last one open): a
      // browser lays out only what is open.
      for (let start = 0; start < nodes.length; start += GROUP) {
        const group = nodes.slice(start, start + GROUP);
        const end = start + group.length;
        w.put(
          `<li class="grp"><details${
            end === nodes.length ? " open" : ""
          }><summary>Nodes ${formatCount(start + 1)}–${formatCount(end)} of ${
            formatCount(nodes.length)
          } (#${group[0]} … #${
            group[group.length - 1]
          })</summary><ol class="sf">`,
        );
        for (const seq of group) this.node(seq, 0);
        w.put(`</ol></details></li>`);
      }
    }
    w.put(`</ol></main>`);
    if (this.#deferred.length === 0) return;
    w.put(`<section class="deeper"><h2>Deeper history</h2>`);
    // Each entry may defer more: the queue grows while it is drained.
    for (let i = 0; i < this.#deferred.length; i++) {
      const seq = this.#deferred[i];
      if (seq === undefined) continue;
      const rep = this.#a.replacements.get(seq);
      if (rep === undefined) continue;
      w.put(
        `<section id="x${seq}"><h3>What <a href="#e${seq}">#${seq}</a> replaced</h3><ol class="shl">`,
      );
      for (const s of rep.shadowed) this.node(s, 1);
      w.put(`</ol></section>`);
    }
    w.put(`</section>`);
  }

  /**
   * One section per compaction and prune, anchored `#d<seq>` (its
   * replacement's seq): where its events are in the log, and the nodes it
   * took off, each linking to where it is drawn.
   */
  drops(list: ReadonlyArray<LoggedCompaction>): void {
    const w = this.#w;
    const done = list.filter((c) =>
      c.replacementSeq !== undefined &&
      this.#a.replacements.has(c.replacementSeq)
    );
    if (done.length === 0) return;
    const bySeq = new Map<number, LoggedCompaction>();
    for (const c of done) {
      if (c.replacementSeq !== undefined) bySeq.set(c.replacementSeq, c);
    }
    const at = (seq: number | undefined): string =>
      seq === undefined ? "–" : `<span class="lo">#${seq}</span>`;
    w.put(
      `<section class="drops" id="drops"><h2>What each compaction dropped</h2><p class="sub">Each compaction and prune, where its events are in the log, and the nodes it took off the surface (<code>palimpsest dropped FILE ID</code> prints the same).</p>`,
    );
    for (const c of done) {
      const seq = c.replacementSeq ?? 0;
      const rep = this.#a.replacements.get(seq);
      if (rep === undefined) continue;
      w.put(
        `<section id="d${seq}"><h3>${
          c.kind === "prune"
            ? "Prune"
            : `Compaction${
              c.compactionId === undefined
                ? ""
                : ` <code>${esc(c.compactionId)}</code>`
            }`
        }: replaced by <a href="#e${seq}">#${seq}</a></h3><p class="sub">${
          c.kind === "prune"
            ? `record ${at(c.recordSeq)}`
            : `start ${at(c.startSeq)}, summary ${at(c.recordSeq)}, end ${
              at(c.endSeq)
            }`
        }${
          c.onCurrentPath
            ? ""
            : "; not on the current path (a rewind went back before it)"
        } · ${plural(rep.shadowed.length, "node")}, ${
          formatCount(rep.charsBefore)
        } → ${formatCount(rep.charsAfter)} characters</p><ol class="dl">`,
      );
      for (const s of rep.shadowed) {
        const event = this.#event(s);
        if (event === undefined || !isSurfaceEvent(event)) continue;
        const d = describeDropped(event, (x) => bySeq.get(x));
        const text = d.text ?? "";
        w.put(
          `<li><a href="#e${s}">#${s}</a> ${esc(d.type)} · ${d.role} · ${
            plural(d.chars, "char")
          }${d.toolCalls.map((t) => ` · call <b>${esc(t.name)}</b>`).join("")}${
            d.toolCallId === undefined
              ? ""
              : ` · result for ${esc(d.toolCallId)}`
          }${
            d.replacement === undefined
              ? ""
              : bySeq.has(s)
              ? ` · <a href="#d${s}">a ${d.replacement.kind}</a>`
              : ` · a ${d.replacement.kind}`
          }${
            text === ""
              ? ""
              : `: ${esc(text.slice(0, cutAt(text, 80)))}${
                text.length > 80 ? "…" : ""
              }`
          }</li>`,
        );
      }
      w.put(`</ol></section>`);
    }
    w.put(`</section>`);
  }

  header(options: ViewOptions): void {
    const w = this.#w;
    const h = this.#session.header;
    const a = this.#a;
    const rows: Array<[string, string]> = [
      ["session", `<code>${esc(h.id)}</code>`],
      ["created", esc(isoTime(h.createdAt))],
      ["seeded", h.isSeeded ? "yes" : "no"],
    ];
    if (h.parentSession !== undefined) {
      rows.push(["parent", `<code>${esc(h.parentSession)}</code>`]);
    }
    if (options.version !== undefined) {
      rows.push([
        "format",
        `v${options.version}${
          options.version < 3 ? " (migrated in memory to v3)" : ""
        }`,
      ]);
    }
    if (a.timeSpan !== undefined) {
      rows.push([
        "events",
        `${esc(isoTime(a.timeSpan[0]))} → ${esc(isoTime(a.timeSpan[1]))}`,
      ]);
    }
    if (h.meta !== undefined) {
      rows.push(["meta", `<code>${esc(json(h.meta, 2000))}</code>`]);
    }
    w.put(
      `<header class="top"><h1>palimpsest · <span>${
        esc(options.title ?? h.id)
      }</span></h1><dl class="hd">${
        rows.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join("")
      }</dl></header>`,
    );
  }

  stats(): void {
    const w = this.#w;
    const a = this.#a;
    const surface = this.#session.surface;
    const kinds = {
      "compaction": 0,
      "prune": 0,
      "system-prompt": 0,
      "rewind": 0,
    };
    const saved = {
      "compaction": 0,
      "prune": 0,
      "system-prompt": 0,
      "rewind": 0,
    };
    let shadowedNodes = 0;
    for (const r of a.replacements.values()) {
      kinds[r.kind]++;
      saved[r.kind] += r.charsBefore - r.charsAfter;
      shadowedNodes += r.shadowed.length;
    }
    const cells: Array<[string, string]> = [
      ["events", formatCount(a.events)],
      ["surface nodes", formatCount(surface.length)],
      ["characters on the surface", formatCount(a.finalChars)],
      ["peak characters", formatCount(a.peakChars)],
      ["estimated tokens on the surface", formatCount(a.finalTokens)],
      ["peak estimated tokens", formatCount(a.peakTokens)],
      ["replacements", formatCount(surface.replacements)],
      ["shadowed nodes", formatCount(shadowedNodes)],
      ["compactions", savedText(kinds.compaction, saved.compaction)],
      ["prunes", savedText(kinds.prune, saved.prune)],
      ["system-prompt changes", formatCount(kinds["system-prompt"])],
      ["rewinds", formatCount(kinds.rewind)],
      ["crash repairs", formatCount(a.repairs.size)],
      ["interrupted turns", formatCount(a.interruptions.length)],
      ["open turns", formatCount(a.open.turns.length)],
      ["open compactions", formatCount(a.open.compactions.length)],
    ];
    const types = [...a.byType.entries()].sort((x, y) => y[1] - x[1]);
    w.put(
      `<section class="stats"><h2>Stats</h2><dl class="st">${
        cells.map(([k, v]) => `<div><dt>${k}</dt><dd>${v}</dd></div>`).join(
          "",
        )
      }</dl><details class="types"><summary>Events by type</summary><table><tbody>${
        types.map(([t, n]) =>
          `<tr><td><code>${esc(t)}</code></td><td>${formatCount(n)}</td></tr>`
        ).join("")
      }</tbody></table></details></section>`,
    );
  }

  chart(): void {
    this.#w.put(
      `<section class="size"><h2>Surface size over the log</h2><p class="sub">Characters of the messages on the surface after each event (texts, tool-call names and arguments, tool-result texts); at the peak, about ${
        formatCount(this.#a.peakTokens)
      } tokens by the model-integration estimate (<code>estimateTokensByChars</code>). Click a mark to see its replacement.</p>${
        sizeChart(this.#a)
      }<p class="legend"><span class="sw area"></span> characters <span class="sw compaction"></span> compaction <span class="sw prune"></span> prune <span class="sw system-prompt"></span> system-prompt change</p></section>`,
    );
  }

  /**
   * The branch tree of a log with rewinds: each branch under the one it
   * leaves, the current one marked. Written without recursion: a chain of
   * rewinds nests as deep as it is long.
   */
  branches(list: ReadonlyArray<Branch>): void {
    if (list.length < 2) return;
    const w = this.#w;
    w.put(
      `<section class="branches"><h2>Branches</h2><p class="sub">Each rewind leaves a branch in the log and goes on from an earlier point; a branch is drawn under the one it leaves. The surface below is the current branch's.</p><ul>`,
    );
    // The depth of the item last opened; -1 before the first.
    let open = -1;
    for (const { branch: b, depth } of branchTree(list)) {
      // Open a list under the last item, or close the items down to this
      // depth (pre-order: one level deeper at most).
      if (depth > open) {
        if (open >= 0) w.put(`<ul>`);
      } else w.put(`</li>${`</ul></li>`.repeat(open - depth)}`);
      open = depth;
      const text = b.firstUserText;
      w.put(
        `<li id="b${b.fromSeq}" class="bn${
          b.current ? " cur" : ""
        }"><span class="bh">#${b.fromSeq}–#${b.tipSeq}${
          b.leavesAt === undefined ? "" : `, from right after #${b.leavesAt}`
        }, ${plural(b.turns.length, "turn")}${
          text === undefined
            ? ""
            : `: “${esc(text.slice(0, cutAt(text, 80)))}${
              text.length > 80 ? "…" : ""
            }”`
        }${b.current ? ` <b>current</b>` : ""}</span>`,
      );
    }
    w.put(`</li>${`</ul></li>`.repeat(open)}</ul></section>`);
  }

  notices(options: ViewOptions): void {
    const w = this.#w;
    const a = this.#a;
    const items: string[] = [];
    if (options.tornTail !== undefined) {
      items.push(
        `<li class="fx">The file ends in a torn line (${
          plural(options.tornTail.bytes, "byte")
        } at offset ${
          formatCount(options.tornTail.offset)
        }): a write the crash cut short. It is not part of this log; opening the session for writing cuts it.</li>`,
      );
    }
    const interruptions = a.interruptions.slice(0, NOTICE_LIMIT);
    for (const i of interruptions) {
      items.push(
        `<li class="ir">Turn ${i.turn} was interrupted and closed by repair (<span class="lo">#${i.seq}</span> turn/end)${
          i.after === undefined
            ? ""
            : `, after <a href="#e${i.after}">#${i.after}</a>`
        }.</li>`,
      );
    }
    if (a.interruptions.length > NOTICE_LIMIT) {
      items.push(
        `<li>and ${
          plural(a.interruptions.length - NOTICE_LIMIT, "more interrupted turn")
        }</li>`,
      );
    }
    for (const t of a.open.turns) {
      items.push(
        `<li class="ir">Turn ${t.turn} is still open: it started at <span class="lo">#${t.startSeq}</span> and the log ends inside it${
          t.step === undefined ? "" : `, in step ${t.step}`
        } (a crash, or a writer still running). <code>palimpsest repair</code>, <code>store.repair</code> or the next <code>runTurn</code> closes it.</li>`,
      );
    }
    for (const c of a.open.compactions) {
      items.push(
        `<li class="ir">Compaction <code>${
          esc(c.compactionId)
        }</code> is still open: it started at <span class="lo">#${c.startSeq}</span> and has no compaction/end, so it holds the compaction lock (a crash while the model wrote the summary, or a writer still running). <code>palimpsest repair</code>, <code>store.repair</code> or the next <code>runTurn</code> or <code>compactIfNeeded</code> closes it.</li>`,
      );
    }
    const repairs = [...a.repairs];
    if (repairs.length > 0) {
      items.push(
        `<li class="fx">Tool calls a crash left without a result, answered by repair: ${
          repairs.slice(0, NOTICE_LIMIT).map((s) =>
            `<a href="#e${s}">#${s}</a>`
          )
            .join(", ")
        }${
          repairs.length > NOTICE_LIMIT
            ? ` and ${formatCount(repairs.length - NOTICE_LIMIT)} more`
            : ""
        }.</li>`,
      );
    }
    if (items.length === 0) return;
    w.put(
      `<section class="notices"><h2>Crashes and repairs</h2><ul>${
        items.join("")
      }</ul></section>`,
    );
  }
}

/**
 * Writes the page for a session, chunk by chunk.
 *
 * @param session The session.
 * @param options Title, format version, torn tail.
 * @param sink Receives the page's chunks in order.
 * @returns `EventsNotHeld`, before any chunk, for a partly held log.
 */
export function writePage(
  session: Session,
  options: ViewOptions,
  sink: (chunk: string) => void,
): Result.Result<void, EventsNotHeld> {
  const events = eventsFrom(session, session.surface.baseSeq);
  if (Result.isFailure(events)) return Result.fail(events.failure);
  const analysis = analyse(events.success, session.surface.baseSeq, BUCKETS);
  const w = new Writer(sink);
  const page = new Page(w, session, analysis);
  const title = options.title ?? session.header.id;
  w.put(
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${
      esc(contentPolicy())
    }"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="generator" content="palimpsest"><title>${
      esc(title)
    } · palimpsest</title><style>${PAGE_STYLE}</style><script>${HEAD_SCRIPT}</script></head><body>`,
  );
  page.header(options);
  page.stats();
  page.chart();
  page.branches(branchesOf(events.success));
  page.notices(options);
  page.surface();
  page.drops(compactionsIn(events.success));
  w.put(
    `<footer>Written by palimpsest from the session log. Shadowed events stay in the log, written over but still legible.</footer><script>${PAGE_SCRIPT}</script></body></html>\n`,
  );
  w.flush();
  return Result.void;
}
