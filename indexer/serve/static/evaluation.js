// The evaluation view: `indexer eval` of a question set on the chosen collections × modes
// (the server runs the library's evaluator: the same numbers as the CLI), as a table and
// a chart of recall@5 against the context tokens it costs, with 95% bootstrap intervals.
// Without a question file, "Make questions" has the server make a set from the documents.
"use strict";

(function () {
  const {el, $, api, fmt} = IX;
  const SVG = "http://www.w3.org/2000/svg";
  const SHAPES = {embedding: "circle", bm25: "square", hybrid: "triangle"};
  const JITTER = {embedding: -6, bm25: 0, hybrid: 6};  // pixels
  let pickedNames = () => [], pickedModes = () => [];

  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function marker(shape, x, y, fill) {
    if (shape === "square") return svg("rect", {x: x - 5, y: y - 5, width: 10, height: 10, fill});
    if (shape === "triangle") return svg("path", {d: `M${x},${y - 6.5} L${x + 6},${y + 4.5} L${x - 6},${y + 4.5} Z`, fill});
    return svg("circle", {cx: x, cy: y, r: 5.5, fill});
  }

  // 1, 2 or 5 times a power of ten, at least `raw`
  function niceStep(raw) {
    const power = 10 ** Math.floor(Math.log10(Math.max(raw, 1e-9)));
    return [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
  }

  const key = (r) => `${r.strategy}|${r.embedder}|${r.mode}`;
  const ci = (pair, digits = 0) => `${pair[0].toFixed(digits)}-${pair[1].toFixed(digits)}`;

  function describe(r, data) {
    const n = data.questions, kc = data.ctx_k;
    return `${r.strategy} · ${r.mode}` + (r.embedder ? ` · ${r.embedder}` : "")
      + `\nrecall@5 ${r["recall@5"]}/${n} (95% ${ci(r["recall@5_ci95"])})   recall@1 ${r["recall@1"]}/${n}`
      + `\nMRR@10 ${fmt(r["mrr@10"])} (95% ${ci(r["mrr@10_ci95"], 3)})`
      + `   nDCG@10 ${fmt(r["ndcg@10"])} (95% ${ci(r["ndcg@10_ci95"], 3)})`
      + `\nstrict@5 ${r["strict@5"]}/${n}   ctxTok@${kc} ${r[`ctx_tokens@${kc}`]}   chunks ${r.chunks} (avg ${r.avg_tokens} tok)`;
  }

  function highlight(k, on) {
    document.querySelectorAll(`[data-key="${CSS.escape(k)}"]`).forEach((n) => n.classList.toggle("hl", on));
  }

  function chart(data) {
    const rows = data.rows, n = data.questions, kc = data.ctx_k;
    const W = 820, H = 440, L = 64, R = 170, T = 34, B = 50;
    const xs = rows.map((r) => r[`ctx_tokens@${kc}`]);
    const lows = rows.map((r) => r["recall@5_ci95"][0]);
    const xMax = Math.max(...xs, 1) * 1.1, yMin = Math.max(0, Math.floor(Math.min(...lows) - 2)), yMax = n;
    const px = (x) => L + (x / xMax) * (W - L - R);
    const py = (y) => H - B - ((y - yMin) / Math.max(yMax - yMin, 1)) * (H - T - B);
    const root = svg("svg", {viewBox: `0 0 ${W} ${H}`, width: W, height: H, "font-size": 11, "font-family": "sans-serif",
      id: "eval-svg"});
    root.append(svg("text", {x: (W - R + L) / 2, y: 18, "text-anchor": "middle", "font-size": 14},
      `recall@5 vs context tokens@${kc} (${n} questions, 95% bootstrap intervals)`));
    const xStep = niceStep(xMax / 6), yStep = Math.max(1, niceStep((yMax - yMin) / 6));
    for (let xv = 0; xv <= xMax; xv += xStep) {
      root.append(svg("line", {x1: px(xv), x2: px(xv), y1: T, y2: H - B, stroke: "#eee"}),
        svg("text", {x: px(xv), y: H - B + 16, "text-anchor": "middle"}, xv.toFixed(0)));
    }
    for (let yv = Math.ceil(yMin / yStep) * yStep; yv <= yMax; yv += yStep) {
      root.append(svg("line", {x1: L, x2: W - R, y1: py(yv), y2: py(yv), stroke: "#eee"}),
        svg("text", {x: L - 8, y: py(yv) + 4, "text-anchor": "end"}, yv.toFixed(0)));
    }
    root.append(svg("line", {x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: "#333"}),
      svg("line", {x1: L, y1: T, x2: L, y2: H - B, stroke: "#333"}),
      svg("text", {x: (W - R + L) / 2, y: H - 12, "text-anchor": "middle"}, `ctxTok@${kc}: tokens the top ${kc} put in a prompt`),
      svg("text", {x: 16, y: (H - B + T) / 2, transform: `rotate(-90 16 ${(H - B + T) / 2})`, "text-anchor": "middle"},
        `recall@5 (of ${n})`));
    const names = [...new Set(rows.map((r) => r.strategy + (r.embedder ? ` (${r.embedder})` : "")))];
    const colour = (r) => `hsl(${((names.indexOf(r.strategy + (r.embedder ? ` (${r.embedder})` : "")) * 137.508) % 360).toFixed(0)} 65% 42%)`;
    for (const r of rows) {
      // modes of one strategy often cost the same tokens: nudge them apart so their bars do not hide each other
      const x = px(r[`ctx_tokens@${kc}`]) + (JITTER[r.mode] || 0), [lo, hi] = r["recall@5_ci95"];
      const g = svg("g", {class: "pt", "data-key": key(r)});
      g.append(svg("line", {x1: x, x2: x, y1: py(lo), y2: py(hi), stroke: colour(r), "stroke-width": 1.5, opacity: 0.7}),
        svg("line", {x1: x - 4, x2: x + 4, y1: py(lo), y2: py(lo), stroke: colour(r)}),
        svg("line", {x1: x - 4, x2: x + 4, y1: py(hi), y2: py(hi), stroke: colour(r)}),
        marker(SHAPES[r.mode] || "circle", x, py(r["recall@5"]), colour(r)));
      g.addEventListener("mousemove", (e) => { IX.tooltip.show(e, describe(r, data)); highlight(key(r), true); });
      g.addEventListener("mouseleave", () => { IX.tooltip.hide(); highlight(key(r), false); });
      root.append(g);
    }
    let y = T + 6;
    for (const name of names) {
      const r = rows.find((x) => x.strategy + (x.embedder ? ` (${x.embedder})` : "") === name);
      root.append(svg("rect", {x: W - R + 16, y: y - 8, width: 10, height: 10, fill: colour(r)}),
        svg("text", {x: W - R + 32, y: y + 1}, r.strategy + (new Set(rows.map((x) => x.embedder)).size > 1 ? ` (${r.embedder})` : "")));
      y += 18;
    }
    y += 8;
    for (const [mode, shape] of Object.entries(SHAPES)) {
      if (!rows.some((r) => r.mode === mode)) continue;
      root.append(marker(shape, W - R + 21, y - 3, "#666"), svg("text", {x: W - R + 32, y: y + 1}, mode));
      y += 18;
    }
    return root;
  }

  function table(data) {
    const n = data.questions, kc = data.ctx_k;
    const heads = ["strategy", "mode", "chunks", "avgTok", "recall@1", "recall@5", "MRR@10", "nDCG@10", "strict@1",
      "strict@5", `ctxTok@${kc}`, `sections@${kc}`, "recall@5 95%", "MRR@10 95%", "nDCG@10 95%"];
    const several = new Set(data.rows.map((r) => r.embedder)).size > 1;
    return [el("tr", {}, ...heads.map((h, i) => el("th", {class: i < 2 ? "l" : "", text: h}))),
      ...data.rows.map((r) => {
        const tr = el("tr", {"data-key": key(r)}, el("td", {text: r.strategy + (several ? ` (${r.embedder})` : "")}),
          el("td", {class: "l", text: r.mode}), el("td", {text: r.chunks}), el("td", {text: Math.round(r.avg_tokens)}),
          el("td", {text: `${r["recall@1"]}/${n}`}), el("td", {text: `${r["recall@5"]}/${n}`}),
          el("td", {text: fmt(r["mrr@10"])}), el("td", {text: fmt(r["ndcg@10"])}), el("td", {text: `${r["strict@1"]}/${n}`}),
          el("td", {text: `${r["strict@5"]}/${n}`}), el("td", {text: Math.round(r[`ctx_tokens@${kc}`])}),
          el("td", {text: fmt(r[`sections@${kc}`], 1)}), el("td", {text: ci(r["recall@5_ci95"])}),
          el("td", {text: ci(r["mrr@10_ci95"], 3)}), el("td", {text: ci(r["ndcg@10_ci95"], 3)}));
        tr.addEventListener("mouseenter", () => highlight(key(r), true));
        tr.addEventListener("mouseleave", () => highlight(key(r), false));
        return tr;
      })];
  }

  function show(data) {
    IX.showError(null);
    $("eval-chart").replaceChildren(chart(data));
    $("eval-table").replaceChildren(...table(data));
    $("eval-text").textContent = `${data.questions} questions from ${data.name}; documents in ${data.source}\n`
      + data.table + "\n\n" + data.intervals + (data.advice_text ? "\n\n" + data.advice_text : "");
    const stale = Object.keys(data.stale || {});
    const notes = [data.generated ? data.generated.message : "", data.generated ? data.generated.shortfall : "",
      data.advice ? data.advice.verdict : "",
      stale.length ? `warning: ${stale.join(", ")} built from other versions of the documents` : "",
      ...(data.warnings || []).map((w) => `warning: ${w}`)];
    $("eval-status").textContent = notes.filter(Boolean).join("; ");
  }

  async function busy(message, work) {
    $("eval-status").textContent = message;
    $("eval-run").disabled = $("eval-generate").disabled = true;
    try {
      show(await work());
    } catch (error) {
      $("eval-status").textContent = "";
      throw error;
    } finally {
      $("eval-run").disabled = $("eval-generate").disabled = false;
    }
  }

  async function run(event) {
    if (event) event.preventDefault();
    const sid = $("eval-set").value, names = pickedNames(), modes = pickedModes();
    if (!sid || !names.length || !modes.length) return;
    const params = new URLSearchParams({set: sid});
    names.forEach((x) => params.append("strategy", x));
    modes.forEach((x) => params.append("mode", x));
    await busy("evaluating… (each question is searched in every collection × mode)", () => api("/api/evaluation?" + params));
  }

  // no question file of your own: questions made from the collections' documents (offline), then evaluated
  async function generate() {
    const names = pickedNames(), modes = pickedModes(), n = parseInt($("eval-n").value, 10);
    if (!names.length || !modes.length || !(n > 0)) return;
    await busy(`making ${n} questions from the documents, then evaluating…`, async () => {
      const data = await api("/api/evaluation/generate", {n, strategies: names, modes});
      IX.sets = (await api("/api/questions")).sets;
      IX.fillSets($("eval-set"));
      $("eval-set").value = data.set;
      return data;
    });
  }

  IX.views.evaluation = {
    async init() {
      pickedNames = IX.checks($("eval-strategies"), "collections:", IX.collections.map((c) => c.name), IX.defaultNames(3));
      pickedModes = IX.checks($("eval-modes"), "modes:", Object.keys(SHAPES), Object.keys(SHAPES));
      IX.fillSets($("eval-set"));
      $("eval-form").addEventListener("submit", (e) => run(e).catch(IX.showError));
      $("eval-generate").addEventListener("click", () => generate().catch(IX.showError));
      if (IX.sets.length) await run();
      else $("eval-status").textContent = "no question file: make questions from the documents (the button above), "
        + "or start indexer serve with --questions FILE";
    },
  };
})();
