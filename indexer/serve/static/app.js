// indexer serve: the shared part — API calls (with the bearer token when the server has
// one), small DOM helpers, the collection and question-set pickers, and the tab router.
"use strict";

const IX = {collections: [], sets: [], views: {}, loaded: {}};

IX.token = () => sessionStorage.getItem("indexer-token") || "";

IX.api = async function (path, body) {
  const headers = {};
  if (IX.token()) headers.Authorization = "Bearer " + IX.token();
  const init = {headers};
  if (body !== undefined) {
    init.method = "POST";
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (response.status === 401) {
    const given = window.prompt("This server needs its token (indexer serve --token):");
    if (given) {
      sessionStorage.setItem("indexer-token", given.trim());
      return IX.api(path, body);
    }
  }
  const data = await response.json().catch(() => ({error: response.statusText}));
  if (!response.ok) throw new Error(data.error || response.statusText);
  return data;
};

IX.el = function (tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
};

IX.$ = (id) => document.getElementById(id);
IX.fmt = (value, digits = 3) => (value === null || value === undefined ? "–" : Number(value).toFixed(digits));

IX.showError = function (error) {
  const box = IX.$("error");
  box.hidden = !error;
  box.textContent = error ? "Error: " + (error.message || error) : "";
};

IX.tooltip = {
  show(event, text) {
    const tip = IX.$("tooltip");
    tip.textContent = text;
    tip.hidden = false;
    const x = Math.min(event.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
    const y = event.clientY + 16 + tip.offsetHeight > window.innerHeight ? event.clientY - tip.offsetHeight - 10
      : event.clientY + 16;
    tip.style.left = x + "px";
    tip.style.top = y + "px";
  },
  hide() { IX.$("tooltip").hidden = true; },
};

// a row of checkboxes; returns a function giving the checked values
IX.checks = function (container, title, values, checked, labels) {
  container.replaceChildren(IX.el("span", {class: "title", text: title}));
  for (const value of values) {
    const box = IX.el("input", {type: "checkbox", value, checked: checked.includes(value)});
    container.append(IX.el("label", {}, box, " ", labels ? labels[value] : value));
  }
  return () => [...container.querySelectorAll("input:checked")].map((b) => b.value);
};

IX.fillSets = function (select, blank) {
  select.replaceChildren(...(blank ? [IX.el("option", {value: "", text: blank})] : []),
    ...IX.sets.map((s) => IX.el("option", {value: s.id, text: s.name})));
};

// the first n collections, leaving parent-child and strategies with many chunks for later
IX.defaultNames = function (n) {
  return IX.collections.slice(0, n).map((c) => c.name);
};

IX.route = function () {
  const hash = location.hash.replace(/^#/, "");
  const token = /(?:^|&)token=([^&]+)/.exec(hash);
  if (token) {
    sessionStorage.setItem("indexer-token", decodeURIComponent(token[1]));
    history.replaceState(null, "", "#documents");
  }
  const name = IX.views[hash] ? hash : "documents";
  for (const [key, view] of Object.entries(IX.views)) {
    IX.$("view-" + key).hidden = key !== name;
    document.querySelector(`nav a[data-view="${key}"]`).classList.toggle("active", key === name);
    if (key === name && !IX.loaded[key]) {
      IX.loaded[key] = true;
      view.init().catch(IX.showError);
    }
  }
};

IX.start = async function () {
  try {
    const [collections, sets] = await Promise.all([IX.api("/api/collections"), IX.api("/api/questions")]);
    IX.collections = collections.collections;
    IX.sets = sets.sets;
    IX.$("status").textContent = `${IX.collections.length} collection(s) in ${collections.where}`;
    if (!IX.collections.length) IX.showError("nothing is built yet: run indexer build PATH, then reload");
  } catch (error) {
    IX.showError(error);
    return;
  }
  window.addEventListener("hashchange", IX.route);
  IX.route();
};

window.addEventListener("load", IX.start);
