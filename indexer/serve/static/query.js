// The query view: one query over several collections × search modes side by side, with
// both sides' ranks and scores, the children a parent was found by, the prompt text and
// its token cost; with a question picked, each hit marked strict / hit / miss.
"use strict";

(function () {
  const {el, $, api, fmt} = IX;
  const MODE_LABELS = {embedding: "embedding", bm25: "bm25", hybrid: "hybrid", default: "saved default"};
  let pickedNames = () => [], pickedModes = () => [], questions = [];

  function sides(h) {
    const parts = [];
    if (h.embedding_rank !== null) parts.push(`emb #${h.embedding_rank} ${fmt(h.embedding_score)}`);
    else if (h.bm25_rank !== null) parts.push("emb –");
    if (h.bm25_rank !== null) parts.push(`bm25 #${h.bm25_rank} ${fmt(h.bm25_score, 2)}`);
    else if (h.embedding_rank !== null) parts.push("bm25 –");
    if (h.embedding_share !== undefined) parts.push(`emb share ${fmt(h.embedding_share, 2)}`);
    return parts.join(" · ");
  }

  // the parent's text with the children that matched highlighted; clamped to whole lines
  // (CSS), with a "more" / "less" toggle that fitToggles() shows only where text is hidden
  function textWithChildren(h) {
    const pre = el("pre", {class: "snippet", title: "click to expand or collapse"});
    const spans = (h.children || []).map((c) => [Math.max(c.start - h.start, 0), Math.min(c.end - h.start, h.text.length)])
      .filter(([s, e]) => s < e).sort((x, y) => x[0] - y[0]);
    let at = 0;
    for (const [s, e] of spans) {
      if (e <= at) continue;
      pre.append(h.text.slice(at, Math.max(s, at)), el("mark", {text: h.text.slice(Math.max(s, at), e)}));
      at = e;
    }
    pre.append(h.text.slice(at));
    const more = el("button", {type: "button", class: "more", hidden: true, text: "more"});
    const toggle = () => {
      more.textContent = pre.classList.toggle("open") ? "less" : "more";
    };
    pre.addEventListener("click", toggle);
    more.addEventListener("click", toggle);
    return [pre, more];
  }

  // a toggle is shown where a clamped snippet hides lines (measured once laid out)
  function fitToggles() {
    for (const pre of document.querySelectorAll("#query-results .snippet:not(.open)")) {
      pre.nextElementSibling.hidden = pre.scrollHeight <= pre.clientHeight + 1;
    }
  }
  window.addEventListener("resize", fitToggles);

  function hitItem(h) {
    const lines = `${h.doc_id}:${h.start_line}-${h.end_line}` + (h.location ? ` (${h.location})` : "");
    return el("li", {class: "hit " + (h.mark || "")},
      h.mark && el("span", {class: "mark " + h.mark, text: h.mark === "strict" ? "strict hit" : h.mark}),
      el("b", {text: `#${h.rank}`}), " ", el("span", {text: fmt(h.score, 4)}),
      h.match && el("span", {class: "muted", text: ` ${h.match}`}),
      h.collection_rank && el("span", {class: "muted", text: ` (#${h.collection_rank} overall)`}), " ",
      el("span", {class: "sides", text: sides(h)}),
      el("div", {class: "where", text: `${lines} · ${h.kind} · ${h.n_tokens} tok`
        + (h.children ? ` · found by ${h.children.length} child chunk(s)` : "")}),
      h.header && el("div", {class: "hdr", text: h.header.split("\n")[0]}),
      textWithChildren(h));
  }

  // answer-sized context: the spans as handed to a model, and what they cost against whole chunks
  function contextBlock(c) {
    const groups = [];
    for (const s of c.spans) {
      const where = s.start_page ? `p. ${s.start_page}` + (s.end_page !== s.start_page ? `-${s.end_page}` : "")
        : `lines ${s.start_line}-${s.end_line}`;
      groups.push(el("div", {class: "span"},
        el("div", {class: "hdr", text: `[${s.doc_id}] ${s.label}`}),
        el("div", {class: "where", text: `${where} · ${s.n_tokens} tok · p=${fmt(s.score, 2)}`}),
        el("pre", {class: "spantext", text: s.text})));
    }
    return el("div", {class: "context"},
      el("div", {class: "ctx", text: `context: ${c.tokens} of ${c.budget} tokens (labels ${c.label_tokens}) · `
        + `${c.spans.length} span(s) from ${c.candidates} chunks · top ${c.whole_k} whole chunks: ${c.whole_tokens} tokens`}),
      ...(groups.length ? groups : [el("div", {class: "muted", text: "no spans"})]));
  }

  function cell(result) {
    const label = MODE_LABELS[result.requested_mode] || result.mode;
    if (result.error) {
      return el("div", {class: "cell"}, el("div", {class: "cell-head"}, el("b", {text: result.strategy}), " · " + label),
        el("div", {class: "err", text: result.error}));
    }
    const prompt = el("pre", {class: "prompt", hidden: true, text: result.hits.map((h) => h.text).join("\n\n")});
    const marks = result.hits.filter((h) => h.mark && h.mark !== "miss");
    return el("div", {class: "cell", "data-strategy": result.strategy, "data-mode": result.requested_mode},
      el("div", {class: "cell-head"}, el("b", {text: result.strategy}), ` · ${label} `,
        result.search !== label && el("span", {class: "search", text: result.search}), el("br"),
        el("span", {class: "ctx", text: `prompt: ${result.ctx_tokens} tokens for ${result.hits.length} hits`}), " ",
        result.hits.length && el("button", {type: "button", text: "show prompt", onclick: (e) => {
          prompt.hidden = !prompt.hidden;
          e.target.textContent = prompt.hidden ? "show prompt" : "hide prompt";
        }}),
        marks.length ? el("span", {class: "muted", text: ` · first hit at #${marks[0].rank}`}) : null),
      prompt,
      result.context && contextBlock(result.context),
      result.hits.length ? el("ol", {class: "hits"}, ...result.hits.map(hitItem))
        : el("div", {class: "muted", text: "no results"}));
  }

  async function run(event) {
    if (event) event.preventDefault();
    const query = $("query-text").value.trim();
    const names = pickedNames(), modes = pickedModes();
    if (!query || !names.length || !modes.length) return;
    const body = {query, strategies: names, modes, k: Number($("query-k").value) || 5};
    const budget = Number($("query-budget").value);
    if (budget) body.budget = budget;
    const paths = $("query-paths").value.split(",").map((p) => p.trim()).filter(Boolean);
    if (paths.length) body.paths = paths;
    const qid = $("query-question").value;
    const question = questions.find((q) => q.id === qid);
    if (question && question.question === query) Object.assign(body, {question_set: $("query-set").value, question: qid});
    const data = await api("/api/compare", body);
    IX.showError(null);
    const q = data.question;
    $("query-info").textContent = q ? `expected: ${q.doc_id}` + (q.section ? ` › ${q.section}` : "")
      + (q.answer ? ` — answer: “${q.answer}”` : "") + " · strict hit = contains the whole answer, hit = overlaps the section" : "";
    $("query-results").style.gridTemplateColumns = `repeat(${names.length}, minmax(300px, 1fr))`;
    const cells = [];
    for (const mode of modes) {
      for (const name of names) {
        const r = data.results.find((x) => x.strategy === name && x.requested_mode === mode);
        if (r) cells.push(cell(r));
      }
    }
    $("query-results").replaceChildren(...cells);
    fitToggles();
  }

  async function loadQuestions() {
    const sid = $("query-set").value;
    questions = sid ? (await api("/api/questions/" + encodeURIComponent(sid))).questions : [];
    $("query-question").replaceChildren(el("option", {value: "", text: questions.length ? "pick a question…" : "(no set)"}),
      ...questions.map((q) => el("option", {value: q.id, text: `${q.id}: ${q.question}`})));
  }

  IX.views.query = {
    async init() {
      pickedNames = IX.checks($("query-strategies"), "collections:", IX.collections.map((c) => c.name), IX.defaultNames(3));
      pickedModes = IX.checks($("query-modes"), "modes:", Object.keys(MODE_LABELS), ["embedding", "bm25", "hybrid"], MODE_LABELS);
      IX.fillSets($("query-set"), "(none)");
      if (IX.sets.length) $("query-set").value = IX.sets[0].id;
      $("query-set").addEventListener("change", () => loadQuestions().catch(IX.showError));
      $("query-question").addEventListener("change", () => {
        const q = questions.find((x) => x.id === $("query-question").value);
        if (q) { $("query-text").value = q.question; run().catch(IX.showError); }
      });
      $("query-form").addEventListener("submit", (e) => run(e).catch(IX.showError));
      await loadQuestions();
    },
  };
})();
