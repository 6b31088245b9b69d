// The documents view: one document rebuilt from stored chunks, each chosen collection's
// chunks drawn over it (a colour per chunk, stripes where two overlap, a bar at every
// cut — red when it falls inside a sentence, table, code fence or list item), children
// inside their parents for parent-child collections.
"use strict";

(function () {
  const {el, $, api} = IX;
  const REASONS = {word: "a word", sentence: "a sentence", table: "a table", row: "a table row", code: "a code block",
    item: "a list item", function: "a function"};
  let picked = () => [];

  const hue = (i) => (i * 137.508) % 360;
  const colour = (i) => `hsl(${hue(i).toFixed(0)} 75% 86%)`;

  function reasons(list) {
    return list.length ? "inside " + list.map((r) => REASONS[r] || r).join(", ") : "";
  }

  function describe(c, i) {
    const bad = [c.cuts.start.length && "starts " + reasons(c.cuts.start),
      c.cuts.end.length && "ends " + reasons(c.cuts.end)].filter(Boolean);
    return `chunk ${i + 1} · ${c.kind} · ${c.n_tokens} tokens · lines ${c.start_line}-${c.end_line}`
      + (c.location ? ` · ${c.location}` : "")
      + (c.header ? "\n" + c.header : "") + (bad.length ? "\n⚠ " + bad.join("; ") : "");
  }

  function showDetail(lane, c, i) {
    const box = $("chunk-detail");
    box.replaceChildren(
      el("button", {class: "close", text: "×", onclick: () => { box.hidden = true; }}),
      el("b", {text: `${lane.name} · chunk ${i + 1}`}), " ",
      el("span", {class: "muted", text: `${c.kind} · ${c.n_tokens} tokens · [${c.start}, ${c.end}) · lines ${c.start_line}-${c.end_line}`
        + (c.location ? ` · ${c.location}` : "")}),
      el("div", {class: "muted", text: `id ${c.id}` + (c.parent_id ? ` · parent ${c.parent_id}` : "")}),
      c.cuts.start.length + c.cuts.end.length > 0 && el("p", {class: "error",
        text: [c.cuts.start.length && "starts " + reasons(c.cuts.start), c.cuts.end.length && "ends " + reasons(c.cuts.end)]
          .filter(Boolean).join("; ")}),
      el("div", {text: "header"}), el("pre", {text: c.header || "(none)"}),
      el("div", {text: "indexed_text (what is embedded and BM25-indexed)"}), el("pre", {class: "indexed", text: c.indexed_text}),
    );
    box.hidden = false;
  }

  // split [0, text.length) at every chunk and parent boundary; each piece knows its chunks
  function renderLane(lane, text) {
    const box = el("div", {class: "lane", "data-lane": lane.name});
    const q = lane.quality;
    box.append(el("h3", {}, lane.name, " ", el("small", {
      text: `${lane.chunks.length} chunks · ${lane.tokens.mean} tok avg · ${q.cuts} cuts, ${q.inside} inside something`
        + (lane.parent_child ? ` · ${lane.parents.length} parents` : "")})));
    const body = el("div", {class: "doctext"});
    box.append(body);
    const chunks = lane.chunks;
    const points = new Set([0, text.length]);
    for (const c of chunks.concat(lane.parents)) { points.add(c.start); points.add(c.end); }
    const pos = [...points].filter((p) => p <= text.length).sort((a, b) => a - b);
    const startsAt = new Map(), endsAt = new Map(), parentAt = new Map(), parentEnd = new Set();
    chunks.forEach((c, i) => {
      (startsAt.get(c.start) || startsAt.set(c.start, []).get(c.start)).push(i);
      (endsAt.get(c.end) || endsAt.set(c.end, []).get(c.end)).push(i);
    });
    lane.parents.forEach((p) => { parentAt.set(p.start, p); parentEnd.add(p.end); });
    const segments = chunks.map(() => []);
    let active = [], holder = body;
    for (let k = 0; k < pos.length - 1; k++) {
      const a = pos[k], b = pos[k + 1];
      if (parentEnd.has(a)) holder = body;
      if (parentAt.has(a)) {
        const p = parentAt.get(a);
        holder = el("span", {class: "parent"}, el("span", {class: "plabel",
          text: `parent · ${p.n_tokens} tokens · ${p.header.split("\n")[0]}`}));
        body.append(holder);
      }
      active = active.filter((i) => chunks[i].end > a);
      const starting = startsAt.get(a) || [];
      active.push(...starting);
      const endingBad = (endsAt.get(a) || []).some((i) => chunks[i].cuts.end.length);
      if (starting.length || endingBad) {
        const bad = endingBad || starting.some((i) => chunks[i].cuts.start.length);
        const why = [...starting.map((i) => chunks[i].cuts.start), ...(endsAt.get(a) || []).map((i) => chunks[i].cuts.end)].flat();
        holder.append(el("span", {class: "cut" + (bad ? " bad" : ""), title: bad ? "cut " + reasons([...new Set(why)]) : "cut"}));
        for (const i of starting) holder.append(el("span", {class: "tok", text: chunks[i].n_tokens}));
      }
      const covering = active.filter((i) => chunks[i].start <= a && chunks[i].end >= b);
      if (!covering.length && holder === body && lane.parents.length && !text.slice(a, b).trim()) continue;  // between parent boxes
      const seg = el("span", {class: covering.length ? "seg" : "gap"}, text.slice(a, b));
      if (covering.length === 1) seg.style.background = colour(covering[0]);
      if (covering.length > 1) {
        seg.classList.add("overlap");
        const [x, y] = covering.slice(-2).map(colour);
        seg.style.background = `repeating-linear-gradient(45deg, ${x} 0 5px, ${y} 5px 10px)`;
      }
      if (covering.length) {
        seg.dataset.chunks = covering.join(",");
        const top = covering[covering.length - 1];
        seg.addEventListener("mousemove", (e) => IX.tooltip.show(e, covering.map((i) => describe(chunks[i], i)).join("\n\n")));
        seg.addEventListener("mouseleave", IX.tooltip.hide);
        seg.addEventListener("click", () => {
          document.querySelectorAll(".seg.sel").forEach((s) => s.classList.remove("sel"));
          segments[top].forEach((s) => s.classList.add("sel"));
          showDetail(lane, chunks[top], top);
        });
        covering.forEach((i) => segments[i].push(seg));
      }
      holder.append(seg);
    }
    return box;
  }

  // the boundary columns of `indexer chunk` (share of chunk ends inside each kind; kept whole)
  function summary(view) {
    const heads = view.quality.headers;
    const rows = view.lanes.map((lane) => {
      if (lane.missing) {
        return el("tr", {}, el("td", {text: lane.name}),
          el("td", {colspan: 4 + heads.length, class: "l muted", text: "does not hold this document"}));
      }
      const cells = view.quality.rows[lane.name].map((text, i) => el("td", {
        class: heads[i].startsWith("in") && text !== "0%" ? "bad-n" : "", text}));
      return el("tr", {}, el("td", {text: lane.name}), el("td", {text: lane.chunks.length}),
        el("td", {text: lane.tokens.mean}), el("td", {text: lane.tokens.max}), el("td", {text: lane.overlap}), ...cells);
    });
    return [el("tr", {}, ...["collection", "chunks", "avg tok", "max tok", "overlap chars", ...heads]
      .map((h) => el("th", {text: h}))), ...rows];
  }

  async function show() {
    const doc = $("doc-select").value;
    const names = picked();
    if (!doc || !names.length) return;
    const params = new URLSearchParams({doc});
    names.forEach((n) => params.append("strategy", n));
    const view = await api("/api/view?" + params);
    IX.showError(null);
    $("doc-summary").replaceChildren(...summary(view));
    $("doc-note").textContent = `${view.doc_id}: ${view.length.toLocaleString()} characters rebuilt from stored chunks`
      + ` (${view.length - view.covered} between chunks)`
      + (view.conflicts.length ? `; ${view.conflicts.join(", ")} built from another version of it` : "");
    const lanes = view.lanes.map((lane) => (lane.missing
      ? el("div", {class: "lane"}, el("h3", {text: lane.name}), el("div", {class: "missing", text: "not in this collection"}))
      : renderLane(lane, view.text)));
    $("lanes").style.gridTemplateColumns = `repeat(${lanes.length}, minmax(260px, 1fr))`;
    $("lanes").replaceChildren(...lanes);
    $("chunk-detail").hidden = true;
  }

  IX.views.documents = {
    async init() {
      const names = IX.collections.map((c) => c.name);
      picked = IX.checks($("doc-strategies"), "collections:", names, IX.defaultNames(3));
      $("doc-strategies").addEventListener("change", () => show().catch(IX.showError));
      const docs = (await api("/api/documents")).documents;
      $("doc-select").replaceChildren(...docs.map((d) => el("option", {value: d.doc_id, text: d.doc_id})));
      $("doc-select").addEventListener("change", () => show().catch(IX.showError));
      $("doc-tokens").addEventListener("change", (e) => $("lanes").classList.toggle("no-tokens", !e.target.checked));
      $("doc-marks").addEventListener("change", (e) => $("lanes").classList.toggle("no-marks", !e.target.checked));
      await show();
    },
  };
})();
