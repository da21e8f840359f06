/**
 * The size chart: the characters on the surface after every event, drawn
 * from the analysis's buckets as one inline SVG, with a mark for each
 * compaction, prune and system-prompt change. Marks that fall on the same
 * column are drawn once, their count in the tooltip, so the SVG stays the
 * same size whatever the length of the log.
 *
 * @module
 */
import type { Analysis, ReplacementKind } from "./analyse.ts";
import { formatCount } from "./format.ts";

const W = 960;
const H = 250;
const LEFT = 92;
const RIGHT = 12;
const TOP = 12;
/** Below the plot: one lane of ticks per replacement kind, then labels. */
const LANE = 11;
const BOTTOM = 3 * LANE + 30;
/** Kinds with at most this many marks also get a line across the plot. */
const FEW = 40;
const LANES: ReadonlyArray<ReplacementKind> = [
  "compaction",
  "prune",
  "system-prompt",
];

const LABEL: Readonly<Record<ReplacementKind, string>> = {
  "compaction": "compaction",
  "prune": "prune",
  "system-prompt": "system-prompt change",
  "rewind": "rewind",
};

interface Mark {
  readonly kind: ReplacementKind;
  readonly firstSeq: number;
  count: number;
  saved: number;
}

/**
 * The chart as an SVG element.
 *
 * @param analysis The analysis.
 * @returns The SVG markup.
 */
export function sizeChart(analysis: Analysis): string {
  const plotW = W - LEFT - RIGHT;
  const plotH = H - TOP - BOTTOM;
  const count = Math.max(1, analysis.events);
  const top = Math.max(1, analysis.peakChars);
  // The left edge of an event's column: a bucket spans its first seq's
  // edge to the edge after its last seq, so the chart is a step chart.
  const x = (seq: number): number =>
    LEFT + ((seq - analysis.baseSeq) / count) * plotW;
  const y = (chars: number): number => TOP + plotH - (chars / top) * plotH;
  const f = (v: number): string => v.toFixed(1);
  const out: string[] = [];
  out.push(
    `<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-labelledby="chart-title">`,
    `<title id="chart-title">Characters on the surface after each event</title>`,
    `<line class="axis" x1="${LEFT}" y1="${TOP + plotH}" x2="${
      W - RIGHT
    }" y2="${TOP + plotH}"/>`,
    `<line class="axis" x1="${LEFT}" y1="${TOP}" x2="${LEFT}" y2="${
      TOP + plotH
    }"/>`,
    `<line class="grid" x1="${LEFT}" y1="${TOP}" x2="${
      W - RIGHT
    }" y2="${TOP}"/>`,
  );
  const series = analysis.series;
  if (series.length > 0) {
    const upper: string[] = [];
    const line: string[] = [];
    for (const b of series) {
      const x0 = f(x(b.firstSeq));
      const x1 = f(x(b.lastSeq + 1));
      upper.push(`${x0},${f(y(b.max))}`, `${x1},${f(y(b.max))}`);
      line.push(`${x0},${f(y(b.max))}`, `${x1},${f(y(b.last))}`);
    }
    const first = series[0];
    const last = series[series.length - 1];
    if (first !== undefined && last !== undefined) {
      out.push(
        `<path class="area" d="M${f(x(first.firstSeq))},${f(y(0))}L${
          upper.join("L")
        }L${f(x(last.lastSeq + 1))},${f(y(0))}Z"/>`,
        `<polyline class="line" points="${line.join(" ")}"/>`,
      );
    }
  }
  // One mark per pixel column and kind.
  const marks = new Map<string, Mark>();
  for (const r of analysis.replacements.values()) {
    // A rewind has no lane: the page draws it in the branch tree.
    if (!LANES.includes(r.kind)) continue;
    const key = `${Math.round(x(r.seq))}:${r.kind}`;
    const mark = marks.get(key);
    if (mark === undefined) {
      marks.set(key, {
        kind: r.kind,
        firstSeq: r.seq,
        count: 1,
        saved: r.charsBefore - r.charsAfter,
      });
    } else {
      mark.count++;
      mark.saved += r.charsBefore - r.charsAfter;
    }
  }
  const perKind = new Map<ReplacementKind, number>();
  for (const m of marks.values()) {
    perKind.set(m.kind, (perKind.get(m.kind) ?? 0) + 1);
  }
  for (const m of marks.values()) {
    const mx = f(x(m.firstSeq));
    const lane = TOP + plotH + 4 + LANES.indexOf(m.kind) * LANE;
    const what = m.count === 1
      ? `${LABEL[m.kind]} at #${m.firstSeq}`
      : `${m.count} ${LABEL[m.kind]}s from #${m.firstSeq}`;
    const across = (perKind.get(m.kind) ?? 0) <= FEW
      ? `<line class="across" x1="${mx}" y1="${TOP}" x2="${mx}" y2="${
        TOP + plotH
      }"/>`
      : "";
    out.push(
      `<a href="#e${m.firstSeq}" class="mk ${m.kind}"><title>${what}: ${
        formatCount(m.saved)
      } characters saved</title>${across}<line x1="${mx}" y1="${lane}" x2="${mx}" y2="${
        lane + LANE - 3
      }"/></a>`,
    );
  }
  LANES.forEach((kind, i) => {
    if ((perKind.get(kind) ?? 0) === 0) return;
    out.push(
      `<text class="lbl" x="${LEFT - 6}" y="${
        TOP + plotH + 4 + i * LANE + LANE - 3
      }" text-anchor="end">${LABEL[kind].replace(" change", "")}s</text>`,
    );
  });
  const lastSeq = analysis.baseSeq + analysis.events - 1;
  out.push(
    `<text class="lbl" x="${LEFT - 6}" y="${TOP + 4}" text-anchor="end">${
      formatCount(analysis.peakChars)
    }</text>`,
    `<text class="lbl" x="${LEFT - 6}" y="${
      TOP + plotH
    }" text-anchor="end">0</text>`,
    `<text class="lbl" x="${LEFT}" y="${H - 8}">#${analysis.baseSeq}</text>`,
    `<text class="lbl" x="${W - RIGHT}" y="${H - 8}" text-anchor="end">#${
      Math.max(analysis.baseSeq, lastSeq)
    }</text>`,
    `<text class="lbl" x="${LEFT + plotW / 2}" y="${
      H - 8
    }" text-anchor="middle">event seq</text>`,
    `</svg>`,
  );
  return out.join("");
}
