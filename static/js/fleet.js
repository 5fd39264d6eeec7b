// Fleet page: a dense, live table grouped by attention. Filters and favourites live in the URL and in
// localStorage; rows change in place as updates arrive.
//
// The page arrives as a shell; the rows come from /api/v1/fleet/rows (compact arrays, fetched while the
// shell is parsed) and the websocket resumes from that document's stream id. Only the rows in and near
// the viewport are in the DOM once the list is long (fixed row heights make the window arithmetic exact),
// so 10,000 rollouts cost what 50 do; a short list is rendered whole.
(function () {
  "use strict";
  var el = UI.el, icon = UI.icon;
  var groups = UI.readJSON("groups");
  var rows = {};            // key -> presented row
  var trs = {};             // key -> <tr> currently in the table
  var ROW_H = 44, GROUP_H = 38, OVERSCAN = 12, WINDOW_FROM = 600;  // px, px, rows, list length
  var items = [];           // the display list: {group, open, count} or {key}
  var offsets = [0];        // offsets[i] = px from the table body's top to item i
  var windowed = false, drawn = [-1, -1];
  var GROUP_RANK = {};
  groups.forEach(function (g, i) { GROUP_RANK[g.name] = i; });
  var params = new URLSearchParams(location.search);
  var filter = {
    group: params.get("group") || "", cluster: params.get("cluster") || "",
    namespace: params.get("namespace") || "", q: params.get("q") || "", fav: params.get("fav") === "1",
  };
  var expanded = { healthy: params.get("healthy") === "1" };
  var favourites = loadFavourites();
  var body = document.getElementById("fleet-body");
  var renderQueued = false;

  function loadFavourites() {
    try { return new Set(JSON.parse(localStorage.getItem("favourites") || "[]")); } catch (e) { return new Set(); }
  }
  function saveFavourites() {
    try { localStorage.setItem("favourites", JSON.stringify(Array.from(favourites))); } catch (e) { /* ignore */ }
  }

  function searchText(row) {
    if (row._search === undefined) {
      row._search = [row.name, row.namespace, row.cluster, row.canaryHash, row.stableHash].concat(
        Object.keys(row.labels).map(function (k) { return k + "=" + row.labels[k]; })).join(" ").toLowerCase();
    }
    return row._search;
  }

  // The filter box's terms, parsed once per query rather than once per row (50,000 rows a keystroke).
  var parsed = { q: null, terms: [] };
  function terms() {
    if (parsed.q !== filter.q) {
      parsed = { q: filter.q, terms: filter.q.toLowerCase().split(/[\s,]+/).filter(Boolean).map(function (term) {
        if (term.indexOf("=") > 0 || term.indexOf(":") > 0) {  // label key=value (or key:value)
          var parts = term.split(/[=:]/);
          return { label: parts[0], value: parts.slice(1).join("=") };
        }
        return { text: term };
      }) };
    }
    return parsed.terms;
  }

  function matches(row) {
    if (filter.group && groupOf(row) !== filter.group) return false;
    if (filter.cluster && row.cluster !== filter.cluster) return false;
    if (filter.namespace && row.namespace !== filter.namespace) return false;
    if (filter.fav && !favourites.has(row.key)) return false;
    var list = terms();
    for (var i = 0; i < list.length; i++) {
      var term = list[i];
      if (term.text !== undefined) { if (searchText(row).indexOf(term.text) < 0) return false; continue; }
      var found = Object.keys(row.labels).some(function (lk) {
        return lk.toLowerCase() === term.label && (!term.value || String(row.labels[lk]).toLowerCase().indexOf(term.value) >= 0);
      });
      if (!found) return false;
    }
    return true;
  }

  function compare(a, b) {
    var fa = favourites.has(a.key) ? 0 : 1, fb = favourites.has(b.key) ? 0 : 1;
    return (GROUP_RANK[groupOf(a)] - GROUP_RANK[groupOf(b)]) || (fa - fb) ||
      (b.findings.critical - a.findings.critical) || (b.findings.warning - a.findings.warning) ||
      ((a.startedAt || "9") < (b.startedAt || "9") ? -1 : (a.startedAt || "9") > (b.startedAt || "9") ? 1 : 0) ||
      (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  }

  // Ages are computed here from startedAt so that the server's rows stay cacheable.
  function age(iso) {
    var started = Date.parse(iso);
    if (!iso || isNaN(started)) return "—";
    var s = Math.max(0, Math.floor((Date.now() - started) / 1000));
    if (s < 60) return s + " s";
    if (s < 3600) return Math.floor(s / 60) + " m";
    if (s < 86400) { var h = Math.floor(s / 3600), m = Math.floor(s / 60) % 60; return m && h < 10 ? h + " h " + m + " m" : h + " h"; }
    return Math.floor(s / 86400) + " d";
  }

  // A row's group is the server's attention classification (`attention`; older documents: `group`);
  // the chips, the group headers and the counts all read only this.
  function groupOf(row) { return row.attention || row.group; }

  // The reason under the status is the server's attention reason; its colour is that attention level's.
  var ATTENTION_TONES = { critical: "critical", degraded: "critical", attention: "warning", waiting: "paused", progressing: "progressing", healthy: "" };
  function reasonTone(row) {
    var tone = ATTENTION_TONES[groupOf(row)];
    return tone ? UI.toneClass(tone) : "";
  }

  function stepCell(row) {
    if (!row.step) return el("td", { "class": "muted", text: "—" });
    var segs = el("span", { "class": "segs", "aria-hidden": "true" });
    var n = Math.min(row.stepCount || 0, 12);
    for (var i = 0; i < n; i++) segs.appendChild(el("i", { "class": i < row.stepIndex ? "on" : "" }));
    return el("td", null, el("b", { text: row.step.replace("/", " / ") }), segs);
  }

  function weightCell(row) {
    if (row.strategy === "BlueGreen" && row.canaryHash) return el("td", null, el("span", { "class": "badge", text: "preview" }));
    if (row.setWeight === null || row.setWeight === undefined || !row.canaryHash) return el("td", { "class": "muted", text: "—" });
    var actual = row.actualWeight || 0, desired = row.setWeight || 0;
    var track = el("span", { "class": "track", "aria-hidden": "true" },
      el("span", { "class": "fill", style: "width:" + Math.max(0, Math.min(100, actual)) + "%" }),
      el("span", { "class": "tick", style: "left:calc(" + Math.max(0, Math.min(100, desired)) + "% - 1px)" }));
    // Numbers beside the bar keep small weights readable (the bar alone hides 1–5 %).
    var nums = el("span", { "class": "nums" }, el("b", { text: String(actual) }), " / " + desired + " %");
    var title = "actual " + actual + " %, desired " + desired + " %" + (row.weightSource === "replicas" ? " (replica ratio)" : "");
    return el("td", null, el("span", { "class": "wbar", title: title }, track, nums,
      row.weightSource === "replicas" ? el("span", { "class": "sub", text: "replicas" }) : null));
  }

  function findingsCell(row) {
    var f = row.findings, parts = [];
    if (f.critical) parts.push(el("span", { "class": "badge tone-critical", title: f.critical + " critical" }, icon("critical"), String(f.critical)));
    if (f.warning) parts.push(el("span", { "class": "badge tone-warning", title: f.warning + " warning" }, icon("warning"), String(f.warning)));
    if (!parts.length) return el("td", { "class": "muted", text: "—" });
    return el("td", null, el("span", { "class": "fcount" }, parts));
  }

  function buildRow(row) {
    var fav = favourites.has(row.key);
    var favButton = el("button", { type: "button", "class": "fav", "aria-pressed": fav ? "true" : "false",
      "aria-label": (fav ? "Remove " : "Add ") + row.name + (fav ? " from" : " to") + " favourites" }, icon(fav ? "star-on" : "star"));
    favButton.addEventListener("click", function () {
      if (favourites.has(row.key)) favourites.delete(row.key); else favourites.add(row.key);
      saveFavourites(); reorder = true; scheduleRender();
    });
    var tr = el("tr", { "class": "row g-" + groupOf(row), "data-key": row.key, "data-status": row.status, "data-attention": groupOf(row), "data-reason-code": row.reasonCode || null },
      el("td", { "class": "col-fav" }, favButton),
      el("td", { "class": "name" }, el("a", { href: row.url, text: row.name }),
        el("div", { "class": "sub" }, UI.controllerIcon(row.controller),
          el("span", { "data-field": "controller", text: row.controllerLabel || "Argo Rollouts" }),
          row.strategy ? " · " + row.strategy.toLowerCase() : "")),
      el("td", null, el("span", { text: row.cluster }), el("span", { "class": "muted", text: " / " }), el("span", { text: row.namespace })),
      el("td", null, el("div", { "class": "status-cell" + (row.tone ? " " + UI.toneClass(row.tone) : "") }, icon(row.icon),
        el("div", null, el("div", { "class": "status-text" }, el("span", { text: row.status }),
            // What the sync engine says, beside what the rollout says.
            row.gitops ? el("span", { "class": "engine" + (row.gitopsTone ? " " + UI.toneClass(row.gitopsTone) : ""), "data-field": "gitops", title: "Argo CD, as the managing Application reports it" },
              icon(row.gitopsIcon), "Argo CD " + row.gitops) : null),
          // An open approval request says more than the reason (which stays in the tooltip); one line either way.
          awaiting[row.key] ? el("div", { "class": "reason awaiting-approval", "data-field": "awaiting", title: row.reason || null, text: awaiting[row.key] })
            : row.reason ? el("div", { "class": "reason " + reasonTone(row), title: row.reason, text: row.reason }) : null))),
      stepCell(row),
      weightCell(row),
      el("td", { "class": "hashes" }, row.canaryHash ? el("span", { text: row.canaryHash }) : null,
        row.canaryHash ? el("span", { "class": "muted", text: " → " }) : null, el("span", { "class": "muted", text: row.stableHash })),
      el("td", { "class": "age", text: age(row.startedAt) }),
      findingsCell(row));
    trs[row.key] = tr;
    return tr;
  }

  function groupRow(group, count, open) {
    var collapsible = group.name === "healthy";
    var label = el("span", null, icon(group.icon || (group.name === "attention" ? "warning" : group.name === "waiting" ? "paused" : group.name)),
      " " + group.label + " ", el("span", { "class": "badge", text: String(count) }), el("span", { "class": "hint", text: group.hint }));
    var head = collapsible
      ? el("button", { type: "button", "aria-expanded": open ? "true" : "false" }, el("span", { "class": "chev" }, icon("chevron")), label,
          el("span", { "class": "hint", text: open ? "· click to collapse" : "· collapsed, click to show" }))
      : label;
    if (collapsible) head.addEventListener("click", function () { expanded.healthy = !open; syncUrl(); scheduleRender(); });
    return el("tr", { "class": "group", "data-expanded": open ? "true" : "false", "data-group": group.name }, el("td", { colspan: "9" }, head));
  }

  // Every row in display order, and the counts, are kept between renders and redone only when rows or
  // favourites changed (``reorder``): a keystroke in the filter box only filters the ordered list.
  // (Keys, not rows: an update that leaves a row's place alone replaces the row object without a reorder.)
  var ordered = [], reorder = true;
  function sortRows() {
    reorder = false;
    var list = Object.keys(rows).map(function (k) { return rows[k]; }).sort(compare);
    ordered = list.map(function (r) { return r.key; });
    var counts = { "": list.length };
    groups.forEach(function (g) { counts[g.name] = 0; });
    var clusters = {}, namespaces = {};
    list.forEach(function (r) {
      counts[groupOf(r)] = (counts[groupOf(r)] || 0) + 1;
      clusters[r.cluster] = 1; namespaces[r.namespace] = 1;
    });
    document.querySelectorAll("[data-count]").forEach(function (node) { node.textContent = String(counts[node.getAttribute("data-count")] || 0); });
    function count(n, word) { return n + " " + word + (n === 1 ? "" : "s"); }
    document.getElementById("fleet-summary").textContent = count(ordered.length, "rollout") + " · " +
      count(Object.keys(clusters).length, "cluster") + " · " + count(Object.keys(namespaces).length, "namespace");
  }

  // The display lists of the last few filter states, kept until the rows, their order or the row heights
  // change (``generation``): deleting what was just typed finds its list ready. Typing further narrows
  // the last list rather than the whole fleet, and when it matched the same rows the table stays as drawn.
  var views = new Map(), generation = 0, last = null, typing = false;
  var VIEWS_KEPT = 32;

  function filterState() {
    return [generation, filter.group, filter.cluster, filter.namespace, filter.fav, expanded.healthy, !!filter.q].join("\u0000");
  }

  function displayList(state) {
    var key = state + "\u0000" + filter.q, view = views.get(key);
    if (view) return view;
    // A longer query of plain words matches a subset of what the shorter one matched (label terms
    // compare keys exactly, so "team=a" → "team=ab" is no narrowing and reads the whole fleet).
    var narrowing = last && last.state === state && filter.q.indexOf(last.q) === 0 && !/[=:]/.test(filter.q);
    var source = narrowing ? last.keys : ordered, keys = [], shown = [];
    for (var i = 0; i < source.length; i++) {
      var row = rows[source[i]];
      if (row && matches(row)) { keys.push(source[i]); shown.push(row); }
    }
    if (narrowing && keys.length === last.keys.length) {
      view = { state: state, q: filter.q, keys: last.keys, items: last.items, offsets: last.offsets };
    } else {
      var list = [], byGroup = {};
      shown.forEach(function (r) { (byGroup[groupOf(r)] = byGroup[groupOf(r)] || []).push(r); });
      groups.forEach(function (g) {
        var members = byGroup[g.name];
        if (!members) return;
        var open = isOpen(g);
        list.push({ group: g, open: open, count: members.length });
        if (open) members.forEach(function (r) { list.push({ key: r.key }); });
      });
      var tops = [0];
      list.forEach(function (item, n) { tops.push(tops[n] + (item.key ? ROW_H : GROUP_H)); });
      view = { state: state, q: filter.q, keys: keys, items: list, offsets: tops };
    }
    views.set(key, view);
    if (views.size > VIEWS_KEPT) views.delete(views.keys().next().value);
    return view;
  }

  function render() {
    renderQueued = false;
    if (reorder) { sortRows(); generation++; views.clear(); last = null; }
    var view = displayList(filterState());
    var unchanged = typing && last && view.items === last.items && drawn[0] >= 0;
    typing = false;
    last = view;
    document.getElementById("fleet-shown").textContent = "Showing " + view.keys.length + " of " + ordered.length;
    if (unchanged) return;  // the same rows as drawn: nothing on screen changes
    items = view.items;
    offsets = view.offsets;
    windowed = items.length > WINDOW_FROM;
    body.classList.toggle("windowed", windowed);
    drawn = [-1, -1];
    drawWindow();
    if (measure()) { generation++; views.clear(); last = null; render(); return; }
    document.getElementById("fleet-empty").hidden = view.keys.length > 0;
  }

  // Row heights come from the stylesheet (cells never wrap); take them from the first drawn rows so the
  // window arithmetic matches what the browser laid out. True when they changed.
  function measure() {
    var row = body.querySelector("tr.row"), head = body.querySelector("tr.group");
    var changed = false;
    if (row && Math.abs(row.getBoundingClientRect().height - ROW_H) > 0.5) { ROW_H = row.getBoundingClientRect().height; changed = true; }
    if (head && Math.abs(head.getBoundingClientRect().height - GROUP_H) > 0.5) { GROUP_H = head.getBoundingClientRect().height; changed = true; }
    return changed;
  }

  function isOpen(group) {
    return group.name !== "healthy" || expanded.healthy || filter.group === "healthy" || !!filter.q || filter.fav;
  }

  // The items [from, to) that cover the viewport (plus some overscan), found by binary search on offsets.
  function visibleRange() {
    if (!windowed) return [0, items.length];
    var top = body.getBoundingClientRect().top;
    var start = Math.max(0, -top), end = start + window.innerHeight;
    function find(y) {
      var lo = 0, hi = items.length;
      while (lo < hi) { var mid = (lo + hi) >> 1; if (offsets[mid + 1] <= y) lo = mid + 1; else hi = mid; }
      return lo;
    }
    return [Math.max(0, find(start) - OVERSCAN), Math.min(items.length, find(end) + 1 + OVERSCAN)];
  }

  function spacer(height) {
    return el("tr", { "class": "spacer", "aria-hidden": "true", style: "height:" + height + "px" }, el("td", { colspan: "9" }));
  }

  // The drawn items' nodes, in order, between two spacers that stand for the rows above and below.
  var nodes = [], topSpacer = null, bottomSpacer = null;

  function nodeFor(i) {
    var item = items[i];
    if (!item.key) return groupRow(item.group, item.count, item.open);
    return rows[item.key] ? buildRow(rows[item.key]) : spacer(ROW_H);  // removed, re-render queued
  }

  function drawWindow() {
    var range = visibleRange();
    if (range[0] === drawn[0] && range[1] === drawn[1]) return;
    var focused = document.activeElement && body.contains(document.activeElement) ? focusKey(document.activeElement) : null;
    // Scrolling keeps the rows still in view where they are and only adds and drops rows at the edges:
    // a frame then lays out the few rows that scrolled in, not the whole window again.
    if (windowed && topSpacer && range[0] < drawn[1] && drawn[0] < range[1]) slideWindow(range);
    else fullWindow(range);
    drawn = range;
    if (focused) restoreFocus(focused);
  }

  function fullWindow(range) {
    var fragment = document.createDocumentFragment();
    trs = {};
    nodes = [];
    topSpacer = windowed ? fragment.appendChild(spacer(offsets[range[0]])) : null;
    for (var i = range[0]; i < range[1]; i++) nodes.push(fragment.appendChild(nodeFor(i)));
    bottomSpacer = windowed ? fragment.appendChild(spacer(offsets[items.length] - offsets[range[1]])) : null;
    UI.clear(body).appendChild(fragment);
  }

  function slideWindow(range) {
    var from = drawn[0], to = drawn[1], i;
    for (; from < range[0]; from++) forget(nodes.shift());
    for (; to > range[1]; to--) forget(nodes.pop());
    var above = document.createDocumentFragment(), added = [];
    for (i = range[0]; i < from; i++) added.push(above.appendChild(nodeFor(i)));
    body.insertBefore(above, topSpacer.nextSibling);
    nodes = added.concat(nodes);
    var below = document.createDocumentFragment();
    for (i = to; i < range[1]; i++) nodes.push(below.appendChild(nodeFor(i)));
    body.insertBefore(below, bottomSpacer);
    topSpacer.style.height = offsets[range[0]] + "px";
    bottomSpacer.style.height = (offsets[items.length] - offsets[range[1]]) + "px";
  }

  function forget(node) {
    var key = node.getAttribute("data-key");
    if (key && trs[key] === node) delete trs[key];
    body.removeChild(node);
  }

  function focusKey(node) {
    var tr = node.closest("tr");
    return tr ? { key: tr.getAttribute("data-key") || tr.getAttribute("data-group"), fav: node.classList.contains("fav") } : null;
  }

  function restoreFocus(f) {
    var tr = trs[f.key] || body.querySelector("tr.group[data-group='" + f.key + "']");
    var target = tr && tr.querySelector(f.fav ? ".fav" : "a, button");
    if (target) target.focus({ preventScroll: true });
  }

  var scrollQueued = false;
  function onScroll() {
    if (!windowed || scrollQueued) return;
    scrollQueued = true;
    requestAnimationFrame(function () { scrollQueued = false; drawWindow(); });
  }
  window.addEventListener("scroll", onScroll, { passive: true });
  window.addEventListener("resize", onScroll);

  // ↓ / ↑ move between rows (and j / k), keeping the focused row on screen even when it was not drawn.
  function moveFocus(from, step) {
    var key = focusKey(from);
    if (!key) return;
    var index = -1;
    for (var i = 0; i < items.length; i++) {
      var item = items[i];
      if (item.key === key.key || (item.group && item.group.name === key.key)) { index = i; break; }
    }
    var next = index + step;
    if (index < 0 || next < 0 || next >= items.length) return;
    var y = offsets[next], top = body.getBoundingClientRect().top + window.scrollY;
    var head = 48 + 40;  // the sticky top bar and the table head
    if (top + y < window.scrollY + head) window.scrollTo(0, top + y - head);
    else if (top + y + ROW_H > window.scrollY + window.innerHeight) window.scrollTo(0, top + y + ROW_H - window.innerHeight);
    drawWindow();
    var target = items[next];
    restoreFocus({ key: target.key || target.group.name, fav: false });
  }
  body.addEventListener("keydown", function (event) {
    if (event.key === "ArrowDown" || event.key === "j") { event.preventDefault(); moveFocus(event.target, 1); }
    else if (event.key === "ArrowUp" || event.key === "k") { event.preventDefault(); moveFocus(event.target, -1); }
  });

  function scheduleRender() {
    if (renderQueued) return;
    renderQueued = true;
    requestAnimationFrame(render);
  }

  // An update replaces rows in place when their place in the table does not change; otherwise re-render.
  function apply(updated, removed) {
    var structural = removed.length > 0;
    updated.forEach(function (row) {
      var old = rows[row.key];
      rows[row.key] = row;
      var tr = trs[row.key];
      // (A row whose searchable text changed may match a filter differently: the kept lists are redone.)
      var moved = !old || groupOf(old) !== groupOf(row) || old.startedAt !== row.startedAt ||
        old.findings.critical !== row.findings.critical || old.findings.warning !== row.findings.warning ||
        searchText(old) !== searchText(row);
      if (moved || matches(old) !== matches(row)) structural = true;
      else if (tr) {  // rows outside the drawn window are drawn when scrolled to
        var fresh = buildRow(row), at = nodes.indexOf(tr);
        tr.replaceWith(fresh);
        if (at >= 0) nodes[at] = fresh;
      }
    });
    removed.forEach(function (key) { delete rows[key]; });
    if (structural) { reorder = true; scheduleRender(); }
  }

  function syncUrl() {
    var p = new URLSearchParams();
    if (filter.group) p.set("group", filter.group);
    if (filter.cluster) p.set("cluster", filter.cluster);
    if (filter.namespace) p.set("namespace", filter.namespace);
    if (filter.q) p.set("q", filter.q);
    if (filter.fav) p.set("fav", "1");
    if (expanded.healthy) p.set("healthy", "1");
    var query = p.toString();
    history.replaceState(null, "", query ? "?" + query : location.pathname);
  }

  function bindFilters() {
    var chips = document.querySelectorAll(".chips .chip");
    chips.forEach(function (chip) {
      chip.setAttribute("aria-pressed", chip.getAttribute("data-group") === filter.group ? "true" : "false");
      chip.addEventListener("click", function () {
        filter.group = chip.getAttribute("data-group");
        chips.forEach(function (c) { c.setAttribute("aria-pressed", c === chip ? "true" : "false"); });
        syncUrl(); scheduleRender();
      });
    });
    var search = document.getElementById("fleet-search");
    search.value = filter.q;
    search.addEventListener("input", function () { filter.q = search.value.trim(); typing = true; syncUrl(); scheduleRender(); });
    ["cluster", "namespace"].forEach(function (name) {
      var select = document.getElementById("fleet-" + name);
      select.value = filter[name];
      select.addEventListener("change", function () { filter[name] = select.value; syncUrl(); scheduleRender(); });
    });
    var fav = document.getElementById("fleet-favourites");
    fav.setAttribute("aria-pressed", filter.fav ? "true" : "false");
    fav.addEventListener("click", function () {
      filter.fav = !filter.fav; fav.setAttribute("aria-pressed", filter.fav ? "true" : "false"); syncUrl(); scheduleRender();
    });
    document.addEventListener("keydown", function (event) {
      if (event.key === "/" && document.activeElement !== search) { event.preventDefault(); search.focus(); }
      else if (event.key === "Escape" && document.activeElement === search) { search.value = ""; filter.q = ""; syncUrl(); scheduleRender(); }
    });
  }

  function keepOptions(id, values) {
    var select = document.getElementById(id), have = {};
    Array.prototype.forEach.call(select.options, function (o) { have[o.value] = 1; });
    values.forEach(function (v) { if (!have[v]) select.appendChild(el("option", { value: v, text: v })); });
  }

  function fromCompact(fields, list) {
    return list.map(function (values) {
      var row = {};
      for (var i = 0; i < fields.length; i++) row[fields[i]] = values[i];
      return row;
    });
  }

  function loadSnapshot(list) {
    rows = {};
    reorder = true;
    list.forEach(function (row) { rows[row.key] = row; });
    keepOptions("fleet-cluster", Object.keys(rows).map(function (k) { return rows[k].cluster; }).filter(unique()).sort());
    keepOptions("fleet-namespace", Object.keys(rows).map(function (k) { return rows[k].namespace; }).filter(unique()).sort());
    ["cluster", "namespace"].forEach(function (name) { document.getElementById("fleet-" + name).value = filter[name]; });
    document.body.setAttribute("data-fleet", "loaded");
    render();
    warmSearch();
  }

  // The filter's search texts, made while the page is idle rather than on the first keystroke (50,000
  // rows' texts take ~100 ms; rows that change later make theirs when first filtered).
  function warmSearch() {
    var keys = Object.keys(rows), next = 0;
    var later = window.requestIdleCallback || function (f) { return setTimeout(function () { f({ timeRemaining: function () { return 10; } }); }, 50); };
    later(function step(deadline) {
      while (next < keys.length && deadline.timeRemaining() > 1) { var row = rows[keys[next++]]; if (row) searchText(row); }
      if (next < keys.length) later(step);
    });
  }

  function unique() { var seen = {}; return function (v) { if (seen[v]) return false; seen[v] = 1; return true; }; }

  function failed(message) {
    document.getElementById("fleet-summary").textContent = message;
    document.body.setAttribute("data-fleet", "failed");
  }

  // Guard rails: rollouts with an open approval request ("awaiting approval (1 of 2)"), as the server
  // words it; asked on load and every 10 s while the tab is visible (requests live in the database, not
  // on the fleet bus, so they do not ride its websocket).
  var awaiting = {};
  function loadAwaiting() {
    fetch("/api/v1/requests/awaiting", { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : null; })
      .then(function (doc) {
        if (!doc) return;
        var next = doc.awaiting || {};
        if (JSON.stringify(next) !== JSON.stringify(awaiting)) {
          awaiting = next;
          scheduleRender();
        }
      }).catch(function () {});
  }
  loadAwaiting();
  setInterval(function () { if (!document.hidden) loadAwaiting(); }, 10000);

  bindFilters();
  var emptyText = document.getElementById("fleet-empty").textContent;
  var live = Live.connect("/ws/fleet/", {
    snapshot: function (message) { loadSnapshot(message.fields ? fromCompact(message.fields, message.rows) : message.rows); },
    update: function (message) { apply(message.rows || [], message.removed || []); },
    // An empty table while a cluster loads is not "nothing matches": the banner above says how far it is.
    status: function (state) {
      document.getElementById("fleet-empty").textContent = state === "loading"
        ? "No rollouts to show yet: a cluster is still loading (see above)." : emptyText;
    },
  });
  // The rows document was requested by the shell's preload; this fetch is served from that response.
  // (Same credentials mode as the preload's crossorigin="use-credentials", or the browser fetches twice.)
  fetch(document.getElementById("fleet-rows-url").getAttribute("href"), { credentials: "include" })
    .then(function (response) {
      if (response.status === 401) { location.reload(); return null; }
      if (!response.ok) throw new Error("the server answered " + response.status);
      return response.json();
    })
    .then(function (doc) {
      if (!doc) return;
      loadSnapshot(fromCompact(doc.fields, doc.rows));
      live.start(doc.streamId);
    })
    .catch(function (error) {
      failed("Could not load the fleet (" + error.message + "); retrying live…");
      live.start(null);  // the websocket's snapshot fills the table instead
    });
  setInterval(function () {  // ages tick without a server round trip
    body.querySelectorAll("tr.row").forEach(function (tr) {
      var row = rows[tr.getAttribute("data-key")];
      var cell = tr.querySelector("td.age");
      if (row && cell) cell.textContent = age(row.startedAt);
    });
  }, 30000);
})();
