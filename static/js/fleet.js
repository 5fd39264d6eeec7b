// Fleet page: a dense, live table grouped by attention. Filters and favourites live in the URL and in
// localStorage; rows change in place as updates arrive.
(function () {
  "use strict";
  var el = UI.el, icon = UI.icon;
  var initial = UI.readJSON("initial");
  var groups = UI.readJSON("groups");
  var rows = {};            // key -> presented row
  var trs = {};             // key -> <tr> currently in the table
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

  function matches(row) {
    if (filter.group && row.group !== filter.group) return false;
    if (filter.cluster && row.cluster !== filter.cluster) return false;
    if (filter.namespace && row.namespace !== filter.namespace) return false;
    if (filter.fav && !favourites.has(row.key)) return false;
    var terms = filter.q.toLowerCase().split(/[\s,]+/).filter(Boolean);
    for (var i = 0; i < terms.length; i++) {
      var term = terms[i];
      if (term.indexOf("=") > 0 || term.indexOf(":") > 0) {  // label key=value (or key:value)
        var parts = term.split(/[=:]/), k = parts[0], v = parts.slice(1).join("=");
        var found = Object.keys(row.labels).some(function (lk) {
          return lk.toLowerCase() === k && (!v || String(row.labels[lk]).toLowerCase().indexOf(v) >= 0);
        });
        if (!found) return false;
      } else if (searchText(row).indexOf(term) < 0) return false;
    }
    return true;
  }

  function compare(a, b) {
    var fa = favourites.has(a.key) ? 0 : 1, fb = favourites.has(b.key) ? 0 : 1;
    return (GROUP_RANK[a.group] - GROUP_RANK[b.group]) || (fa - fb) ||
      (b.findings.critical - a.findings.critical) || (b.findings.warning - a.findings.warning) ||
      ((a.startedAt || "9") < (b.startedAt || "9") ? -1 : (a.startedAt || "9") > (b.startedAt || "9") ? 1 : 0) ||
      (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  }

  function reasonTone(row) {
    if (row.group === "attention" || row.group === "degraded") return "tone-critical";
    return row.group === "waiting" || row.group === "progressing" ? "tone-accent" : "";
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
      saveFavourites(); scheduleRender();
    });
    var tr = el("tr", { "class": "row g-" + row.group, "data-key": row.key, "data-status": row.status },
      el("td", { "class": "col-fav" }, favButton),
      el("td", { "class": "name" }, el("a", { href: row.url, text: row.name }),
        el("div", { "class": "sub", text: (row.strategy || "").toLowerCase() })),
      el("td", null, el("span", { text: row.cluster }), el("span", { "class": "muted", text: " / " }), el("span", { text: row.namespace })),
      el("td", null, el("div", { "class": "status-cell" }, icon(row.icon),
        el("div", null, el("div", { "class": "status-text", text: row.status }),
          row.reason ? el("div", { "class": "reason " + reasonTone(row), text: row.reason }) : null))),
      stepCell(row),
      weightCell(row),
      el("td", { "class": "hashes" }, row.canaryHash ? el("span", { text: row.canaryHash }) : null,
        row.canaryHash ? el("span", { "class": "muted", text: " → " }) : null, el("span", { "class": "muted", text: row.stableHash })),
      el("td", { text: row.age }),
      findingsCell(row));
    trs[row.key] = tr;
    return tr;
  }

  function groupRow(group, count) {
    var collapsible = group.name === "healthy";
    var open = !collapsible || expanded.healthy || filter.group === "healthy" || filter.q || filter.fav;
    var label = el("span", null, icon(group.name === "attention" ? "critical" : group.name === "waiting" ? "paused" : group.name),
      " " + group.label + " ", el("span", { "class": "badge", text: String(count) }), el("span", { "class": "hint", text: group.hint }));
    var head = collapsible
      ? el("button", { type: "button", "aria-expanded": open ? "true" : "false" }, el("span", { "class": "chev" }, icon("chevron")), label,
          el("span", { "class": "hint", text: open ? "· click to collapse" : "· collapsed, click to show" }))
      : label;
    if (collapsible) head.addEventListener("click", function () { expanded.healthy = !open; syncUrl(); scheduleRender(); });
    return { tr: el("tr", { "class": "group", "aria-expanded": open ? "true" : "false", "data-group": group.name }, el("td", { colspan: "9" }, head)), open: open };
  }

  function render() {
    renderQueued = false;
    var list = Object.keys(rows).map(function (k) { return rows[k]; });
    var counts = { "": list.length };
    groups.forEach(function (g) { counts[g.name] = 0; });
    list.forEach(function (r) { counts[r.group] = (counts[r.group] || 0) + 1; });
    document.querySelectorAll("[data-count]").forEach(function (node) { node.textContent = String(counts[node.getAttribute("data-count")] || 0); });
    var shown = list.filter(matches).sort(compare);
    var fragment = document.createDocumentFragment();
    trs = {};
    groups.forEach(function (g) {
      var members = shown.filter(function (r) { return r.group === g.name; });
      if (!members.length) return;
      var head = groupRow(g, members.length);
      fragment.appendChild(head.tr);
      if (head.open) members.forEach(function (r) { fragment.appendChild(buildRow(r)); });
    });
    UI.clear(body).appendChild(fragment);
    document.getElementById("fleet-empty").hidden = shown.length > 0;
    document.getElementById("fleet-shown").textContent = "Showing " + shown.length + " of " + list.length;
    var clusters = {}, namespaces = {};
    list.forEach(function (r) { clusters[r.cluster] = 1; namespaces[r.namespace] = 1; });
    document.getElementById("fleet-summary").textContent = list.length + " rollouts · " + Object.keys(clusters).length +
      " clusters · " + Object.keys(namespaces).length + " namespaces";
  }

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
      var moved = !old || old.group !== row.group || old.startedAt !== row.startedAt ||
        old.findings.critical !== row.findings.critical || old.findings.warning !== row.findings.warning;
      if (moved || !tr || matches(old) !== matches(row)) {
        structural = true;
      } else {
        tr.replaceWith(buildRow(row));
      }
    });
    removed.forEach(function (key) { delete rows[key]; });
    if (structural) scheduleRender();
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
    search.addEventListener("input", function () { filter.q = search.value.trim(); syncUrl(); scheduleRender(); });
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

  function loadSnapshot(list) {
    rows = {};
    list.forEach(function (row) { rows[row.key] = row; });
    keepOptions("fleet-cluster", list.map(function (r) { return r.cluster; }));
    keepOptions("fleet-namespace", list.map(function (r) { return r.namespace; }));
    render();
  }

  bindFilters();
  loadSnapshot(initial.rows);
  var live = Live.connect("/ws/fleet/", {
    snapshot: function (message) { loadSnapshot(message.rows); },
    update: function (message) { apply(message.rows || [], message.removed || []); },
  });
  live.start(initial.streamId);
})();
