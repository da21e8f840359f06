/**
 * The page's own style and script, inline (the page loads nothing). The
 * Content-Security-Policy of the page allows exactly these two, by hash.
 *
 * The script only folds: it opens the `<details>` around a linked event
 * when a `#e<seq>` link is followed, and offers "open all" and "close all".
 * The page reads the same without it.
 *
 * @module
 */

/** The page's stylesheet. */
export const PAGE_STYLE: string = `
:root{--bg:#fbfaf7;--fg:#1d1d1f;--mute:#6b6b70;--line:#e3e0d8;--card:#fff;
--sys:#7b5ea7;--user:#2a6fdb;--asst:#1f8a5b;--tool:#b7791f;--comp:#c2410c;--prune:#d97706;--sysp:#2563eb;--fx:#be123c;
font:14px/1.45 ui-sans-serif,system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--fg);background:var(--bg)}
@media (prefers-color-scheme:dark){:root{--bg:#141416;--fg:#e8e6e1;--mute:#9a9aa2;--line:#2d2d33;--card:#1c1c20}}
body{margin:0 auto;max-width:1080px;padding:20px 24px 60px}
h1{font-size:22px;margin:0 0 8px;font-weight:650}h1 span{font-family:ui-monospace,monospace;font-weight:500}
h2{font-size:16px;margin:28px 0 6px}h3{font-size:14px}
.sub{color:var(--mute);margin:0 0 10px}
code,.tx,.ar{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12.5px}
.hd{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:0;color:var(--mute)}
.hd dd{margin:0;color:var(--fg);overflow-wrap:anywhere}
.st{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:8px;margin:0}
.st div{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:8px 10px}
.st dt{color:var(--mute);font-size:12px}.st dd{margin:2px 0 0;font-weight:600;font-variant-numeric:tabular-nums}
.types table{border-collapse:collapse;margin-top:6px}.types td{padding:2px 12px 2px 0;font-variant-numeric:tabular-nums}
.chart{width:100%;height:auto;background:var(--card);border:1px solid var(--line);border-radius:8px}
.chart .axis{stroke:var(--mute);stroke-width:1}.chart .grid{stroke:var(--line);stroke-dasharray:3 3}
.chart .area{fill:rgba(42,111,219,.16);stroke:none}.chart .line{fill:none;stroke:var(--user);stroke-width:1.4}
.chart .lbl{fill:var(--mute);font-size:11px}
.chart .mk line{stroke-width:1.5}.chart .mk line.across{opacity:.45}.chart .mk:hover line{stroke-width:3;opacity:1}
.chart .compaction line{stroke:var(--comp)}.chart .prune line{stroke:var(--prune)}.chart .prune line.across{stroke-dasharray:4 3}.chart .system-prompt line{stroke:var(--sysp)}
.legend{color:var(--mute);font-size:12px}.sw{display:inline-block;width:14px;height:10px;margin:0 4px 0 10px;border-radius:2px;vertical-align:middle}
.sw.area{background:rgba(42,111,219,.35)}.sw.compaction{background:var(--comp)}.sw.prune{background:var(--prune)}.sw.system-prompt{background:var(--sysp)}
.branches ul{margin:0;padding-left:20px}.branches li.cur>.bh{font-weight:600}.branches .cur b{color:var(--user)}
.notices ul{margin:0;padding-left:20px}.notices li.fx,.notices li.ir{color:var(--fx)}
.tools{margin:0 0 10px}.tools button{font:inherit;font-size:12px;padding:3px 10px;border:1px solid var(--line);border-radius:6px;background:var(--card);color:var(--fg);cursor:pointer}
ol.sf,ol.shl{list-style:none;margin:0;padding:0}
.grp>details>summary{padding:4px 0;font-size:13px}.grp>details[open]>summary{margin-bottom:6px}
.m{background:var(--card);border:1px solid var(--line);border-left:4px solid var(--mute);border-radius:8px;margin:0 0 8px;padding:6px 11px}
ol.sf>.m{content-visibility:auto;contain-intrinsic-size:auto 80px}
.m.system{border-left-color:var(--sys)}.m.user{border-left-color:var(--user)}.m.assistant{border-left-color:var(--asst)}.m.tool{border-left-color:var(--tool)}
.m.rp{box-shadow:inset 0 0 0 1px rgba(194,65,12,.25)}.m.rp.prune{box-shadow:inset 0 0 0 1px rgba(217,119,6,.3)}
.m.em{opacity:.7}.m.hl{outline:3px solid #facc15;outline-offset:2px}
.h{margin:0 0 3px;font-size:12px;color:var(--mute)}.h a{color:var(--mute);font-family:ui-monospace,monospace}
.h>b{text-transform:uppercase;letter-spacing:.04em;font-size:11px;margin-right:2px}
.system>.h>b{color:var(--sys)}.user>.h>b{color:var(--user)}.assistant>.h>b{color:var(--asst)}.tool>.h>b{color:var(--tool)}
.bd{font-style:normal;border-radius:999px;padding:0 7px;margin-left:4px;font-size:11px;font-weight:600;color:#fff;background:var(--mute)}
.bd.compaction{background:var(--comp)}.bd.prune{background:var(--prune)}.bd.system-prompt{background:var(--sysp)}.bd.fx,.bd.ir{background:var(--fx)}
.tx,.ar{white-space:pre-wrap;overflow-wrap:anywhere;margin:2px 0}
.tc,.trs{border:1px dashed var(--line);border-radius:6px;padding:3px 8px;margin:4px 0;font-size:12.5px}
.tx.trs{font-size:12.5px}
.tc{color:var(--mute)}.tc>b{color:var(--fg);font-family:ui-monospace,monospace}
.trs.err{border-color:var(--fx)}.trs.err>b{color:var(--fx);font-size:11px;text-transform:uppercase}
.ar{color:var(--mute)}.at{color:var(--mute);font-style:italic}.none{color:var(--mute);font-style:italic}
.lin,.deep{font-size:12px;color:var(--mute);margin-top:4px}
.loading{display:none}.ld .loading{display:block;color:var(--mute)}.ld #sf,.ld .deeper{display:none}
details>summary{cursor:pointer;color:var(--mute);font-size:12px}
details.sh{margin-top:6px;border-top:1px solid var(--line);padding-top:4px}
details.sh>summary{color:var(--comp);font-weight:600}.prune>details.sh>summary{color:var(--prune)}.system-prompt>details.sh>summary{color:var(--sysp)}
details.sh[open]>ol{margin:6px 0 2px 8px;padding-left:10px;border-left:2px dotted var(--line)}
details.sh .m{background:var(--bg)}
.note.ir{color:var(--fx);font-size:12px;margin-top:4px}
footer{margin-top:40px;color:var(--mute);font-size:12px}
`;

/**
 * Runs first, in the head: hides the surface list while the page is
 * parsed, so that a browser lays a long list out once instead of again and
 * again as it arrives. {@link PAGE_SCRIPT} shows it; without scripts it is
 * never hidden.
 */
export const HEAD_SCRIPT: string =
  `document.documentElement.classList.add("ld");`;

/** The page's script: shows the surface, then folding only. */
export const PAGE_SCRIPT: string = `(() => {
  document.documentElement.classList.remove("ld");
  const reveal = (el) => {
    for (let e = el.parentElement; e; e = e.parentElement) {
      if (e.tagName === "DETAILS") e.open = true;
    }
  };
  const go = () => {
    const id = decodeURIComponent(location.hash.slice(1));
    const target = id === "" ? null : document.getElementById(id);
    if (!target) return;
    reveal(target);
    target.scrollIntoView({ block: "center" });
    for (const old of document.querySelectorAll(".hl")) old.classList.remove("hl");
    target.classList.add("hl");
  };
  addEventListener("hashchange", go);
  document.addEventListener("click", (ev) => {
    const a = ev.target instanceof Element ? ev.target.closest("a[href^='#']") : null;
    if (a && a.getAttribute("href") === location.hash) setTimeout(go);
  });
  if (location.hash) go();
  const tools = document.getElementById("tools");
  if (tools) {
    tools.hidden = false;
    tools.addEventListener("click", (ev) => {
      const b = ev.target instanceof Element ? ev.target.closest("button") : null;
      if (!b) return;
      const open = b.dataset.act === "open";
      for (const d of document.querySelectorAll("details.sh")) d.open = open;
    });
  }
})();`;
