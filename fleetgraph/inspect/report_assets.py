"""The inline style and script of the HTML report (`report.py`): nothing is fetched when the page opens."""

CSS = """
:root { --fwd: #cfe0f7; --bwd: #f4c7cf; --opt: #c9e7c3; --rpc: #f9d0a5;
        --send: #d9480f; --recv: #1c7ed6; --prefetch: #9c36b5; --allreduce: #2b8a3e; }
* { box-sizing: border-box; }
body { margin: 0; font: 13px/1.35 system-ui, -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; color: #222; }
header { padding: 10px 16px 4px; border-bottom: 1px solid #ddd; }
h1 { font-size: 17px; margin: 0 0 4px; }
h2 { font-size: 14px; margin: 0 0 6px; }
h3 { font-size: 12px; margin: 0; padding: 3px 6px; background: #eee; border-radius: 4px 4px 0 0; }
.legend span { display: inline-block; margin-right: 8px; padding: 1px 6px; border-radius: 3px; font-size: 12px; }
.legend .arrow { border-bottom: 3px solid; border-radius: 0; padding: 0 2px; }
.legend .arrow.send { border-color: var(--send); } .legend .arrow.recv { border-color: var(--recv); }
.legend .arrow.prefetch { border-color: var(--prefetch); } .legend .arrow.allreduce { border-color: var(--allreduce); }
#plan { padding: 6px 16px; border-bottom: 1px solid #ddd; }
#plan p { margin: 2px 0 6px; color: #555; }
table.plan { border-collapse: collapse; font-size: 12px; }
table.plan th, table.plan td { border: 1px solid #ddd; padding: 2px 8px; text-align: left; white-space: nowrap; }
table.plan tr.total th, table.plan tr.total td { background: #f4f4f4; }
table.plan td:nth-last-child(-n+2) { text-align: right; }
#lanes { position: relative; display: flex; align-items: flex-start; gap: 56px; padding: 12px 16px 40px;
         overflow: auto; }
#links { position: absolute; left: 0; top: 0; pointer-events: none; z-index: 2; overflow: visible; }
#links path { fill: none; stroke-width: 1.6; opacity: .55; }
#links path.hot { stroke-width: 3; opacity: 1; }
#links path.send { stroke: var(--send); } #links path.recv { stroke: var(--recv); stroke-dasharray: 5 3; }
#links path.prefetch { stroke: var(--prefetch); } #links path.allreduce { stroke: var(--allreduce); }
.role { flex: 0 0 270px; min-width: 0; }
.role > h2 { padding: 5px 8px; border-radius: 4px; background: #e7edf5; }
.role.pserver > h2 { background: #fbe3c8; }
.block { border: 1px solid #ccc; border-radius: 4px; margin-bottom: 10px; background: #fff; }
.block ol { list-style: none; margin: 0; padding: 3px; }
li.sub-block { margin: 2px 0 4px 14px; } li.sub-block .block { margin-bottom: 0; border-style: dashed; }
li.op { margin: 2px 0; padding: 2px 5px; border-radius: 3px; cursor: pointer; overflow: hidden;
        white-space: nowrap; text-overflow: ellipsis; border: 1px solid transparent; }
li.op .args { color: #555; margin-left: 6px; font-size: 11px; }
li.op:hover, li.op:focus { border-color: #333; outline: none; }
li.op.selected { border-color: #000; box-shadow: 0 0 0 2px #000; }
li.op.dangling { border-color: red; }
.op.fwd { background: var(--fwd); } .op.bwd { background: var(--bwd); }
.op.opt { background: var(--opt); } .op.rpc { background: var(--rpc); }
.block.flash { box-shadow: 0 0 0 3px #000; }
details.startup { margin-top: 4px; } details.startup > summary { cursor: pointer; color: #555; margin-bottom: 4px; }
#panel { position: fixed; top: 0; right: 0; bottom: 0; width: 400px; overflow: auto; background: #fff;
         border-left: 2px solid #999; padding: 10px 14px; z-index: 5; box-shadow: -4px 0 12px rgba(0,0,0,.12); }
#panel h2 { font-size: 15px; } #panel .where { color: #555; margin-bottom: 8px; }
#panel table { border-collapse: collapse; width: 100%; font-size: 12px; margin-bottom: 10px; }
#panel td, #panel th { border: 1px solid #ddd; padding: 2px 5px; vertical-align: top; text-align: left;
                       word-break: break-all; }
#panel a { color: #1c5fb0; cursor: pointer; }
body.panel-open { margin-right: 400px; }
#close { float: right; font-size: 18px; border: none; background: none; cursor: pointer; }
"""

SCRIPT = r"""
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("fg-data").textContent);
  const lanes = document.getElementById("lanes");
  const svg = document.getElementById("links");
  const panel = document.getElementById("panel");
  const body = document.getElementById("panel-body");
  const NS = "http://www.w3.org/2000/svg";
  const KINDS = ["send", "recv", "prefetch", "allreduce"];
  let selected = null;

  function shown(el) {  // laid out, and not inside a closed <details> (whose content still has boxes)
    return el !== null && el.getClientRects().length > 0 && el.closest("details:not([open])") === null;
  }
  function box(el) {
    const r = el.getBoundingClientRect(), o = lanes.getBoundingClientRect();
    return { x: r.left - o.left + lanes.scrollLeft, y: r.top - o.top + lanes.scrollTop, w: r.width, h: r.height };
  }
  function node(tag, attrs, text) {  // an SVG element
    const el = document.createElementNS(NS, tag);
    for (const k in attrs || {}) el.setAttribute(k, attrs[k]);
    if (text !== undefined) el.textContent = text;
    return el;
  }
  function html(tag, text, cls) {
    const el = document.createElement(tag);
    if (text !== undefined) el.textContent = text;
    if (cls) el.className = cls;
    return el;
  }

  function draw() {
    svg.replaceChildren();
    svg.setAttribute("width", lanes.scrollWidth);
    svg.setAttribute("height", lanes.scrollHeight);
    const defs = node("defs");
    for (const kind of KINDS) {
      const m = node("marker", { id: "arrow-" + kind, viewBox: "0 0 10 10", refX: "9", refY: "5",
                                  markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" });
      const p = node("path", { d: "M0,0 L10,5 L0,10 z" });
      p.style.fill = "var(--" + kind + ")";
      m.appendChild(p);
      defs.appendChild(m);
    }
    svg.appendChild(defs);
    for (const link of data.links) {
      const a = document.getElementById(link.source), b = document.getElementById(link.target);
      if (!shown(a) || !shown(b)) continue;
      const s = box(a), t = box(b);
      const right = t.x + t.w / 2 > s.x + s.w / 2;
      const x1 = right ? s.x + s.w : s.x, y1 = s.y + s.h / 2;
      const x2 = right ? t.x : t.x + t.w;
      const y2 = b.tagName === "LI" ? t.y + t.h / 2 : t.y + 10;
      const dx = Math.max(30, Math.abs(x2 - x1) / 2) * (right ? 1 : -1);
      const head = link.kind === "recv" ? "marker-start" : "marker-end";  // a recv's values flow to the trainer
      const path = node("path", { d: `M${x1},${y1} C${x1 + dx},${y1} ${x2 - dx},${y2} ${x2},${y2}`,
                                  class: link.kind, [head]: `url(#arrow-${link.kind})` });
      path.dataset.source = link.source;
      path.dataset.target = link.target;
      svg.appendChild(path);
    }
    if (selected) highlight(selected.id);
  }

  function highlight(id) {
    for (const p of svg.querySelectorAll("path[data-source]")) {
      p.classList.toggle("hot", p.dataset.source === id || p.dataset.target === id);
    }
  }

  function slotTable(title, slots) {
    const table = html("table");
    const head = table.insertRow();
    head.appendChild(html("th", title));
    head.appendChild(html("th", "variable"));
    head.appendChild(html("th", "shape"));
    head.appendChild(html("th", "dtype"));
    for (const slot of Object.keys(slots)) {
      for (const v of slots[slot]) {
        const row = table.insertRow();
        row.insertCell().textContent = slot;
        for (const x of v) row.insertCell().textContent = x;
      }
    }
    return table;
  }

  function select(id) {
    const el = document.getElementById(id), d = data.ops[id];
    if (!el || !d) return false;
    if (selected) selected.classList.remove("selected");
    selected = el;
    el.classList.add("selected");
    body.replaceChildren(html("h2", d.type), html("div", d.where + " · " + d.role, "where"));
    if (d.bucket) body.appendChild(html("p", "all-reduces " + d.bucket));
    body.appendChild(slotTable("input", d.inputs));
    body.appendChild(slotTable("output", d.outputs));
    const attrs = html("table");
    const head = attrs.insertRow();
    head.appendChild(html("th", "attribute"));
    head.appendChild(html("th", "value"));
    for (const k of Object.keys(d.attrs)) {
      const row = attrs.insertRow();
      row.insertCell().textContent = k;
      row.insertCell().textContent = JSON.stringify(d.attrs[k]);
    }
    body.appendChild(attrs);
    for (const link of d.links) {
      const p = html("p");
      p.appendChild(document.createTextNode(link.kind + " " + link.var + " → "));
      const a = html("a", link.label);
      a.addEventListener("click", () => jump(link.target));
      p.appendChild(a);
      body.appendChild(p);
    }
    panel.hidden = false;
    document.body.classList.add("panel-open");  // the lanes narrow beside the panel instead of under it
    draw();
    history.replaceState(null, "", "#op=" + encodeURIComponent(id));
    return true;
  }

  function jump(id) {
    const el = document.getElementById(id);
    if (!el) return;
    el.scrollIntoView({ block: "center", inline: "center" });
    el.classList.add("flash");
    setTimeout(() => el.classList.remove("flash"), 900);
  }

  lanes.addEventListener("click", (e) => {
    const op = e.target.closest("li.op");
    if (op) select(op.id);
  });
  lanes.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && e.target.matches("li.op")) select(e.target.id);
  });
  document.getElementById("close").addEventListener("click", () => {
    panel.hidden = true;
    document.body.classList.remove("panel-open");
    if (selected) selected.classList.remove("selected");
    selected = null;
    draw();
  });
  for (const d of document.querySelectorAll("details")) d.addEventListener("toggle", draw);
  window.addEventListener("resize", draw);
  draw();
  if (location.hash.startsWith("#op=")) select(decodeURIComponent(location.hash.slice(4)));
  document.body.dataset.ready = String(svg.querySelectorAll("path[data-source]").length);
})();
"""
