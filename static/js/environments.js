// Environments page: each application's environments in promotion order, with what runs where. The
// server groups and orders (/api/v1/environments); the fleet websocket only says "something changed",
// and the page asks the server again (debounced). Everything is set with textContent.
(function () {
  "use strict";
  var el = UI.el, icon = UI.icon;
  var doc = UI.readJSON("env-doc");
  var root = document.getElementById("env-apps");
  var input = document.getElementById("env-search");
  var pending = null;

  function images(list, tag) {
    return list.map(function (image) { return el("div", { "class": "mono env-image", "data-tag": tag }, image); });
  }

  function place(p) {
    var card = el("a", { "class": "env-place" + (p.match ? " match" : ""), href: p.url, "data-env": p.environment,
      "data-key": p.key });
    card.appendChild(el("div", { "class": "env-name" }, p.environment));
    card.appendChild(el("div", { "class": "muted env-where" }, p.cluster + " / " + p.namespace));
    card.appendChild(el("div", { "class": "status-cell env-status" }, icon(p.icon), el("span", { "class": "env-phase" }, p.status),
      p.step ? el("span", { "class": "muted env-step" }, "step " + p.step + (p.setWeight !== null && p.setWeight !== undefined && p.canaryHash ? " · " + p.setWeight + " %" : "")) : ""));
    if (p.gitops) {
      card.appendChild(el("div", { "class": "muted env-gitops", title: "Argo CD Application " + p.application },
        icon(p.gitopsIcon || "unknown"), "Argo CD " + p.gitops));
    }
    var runs = el("div", { "class": "env-runs" });
    runs.appendChild(el("div", { "class": "k" }, "stable"));
    images(p.stableImages, "stable").forEach(function (n) { runs.appendChild(n); });
    if (p.canaryImages.length) {
      runs.appendChild(el("div", { "class": "k" }, "canary"));
      images(p.canaryImages, "canary").forEach(function (n) { runs.appendChild(n); });
    }
    runs.appendChild(el("div", { "class": "k" }, "commit"));
    runs.appendChild(el("div", { "class": "mono env-commit", title: p.commit || "no Argo CD Application manages it" }, p.commitShort || "—"));
    card.appendChild(runs);
    if (p.reason) card.appendChild(el("div", { "class": "muted env-reason" }, p.reason));
    return card;
  }

  function draw(d) {
    doc = d;
    UI.clear(root);
    if (!d.apps.length) {
      root.appendChild(el("p", { "class": "empty", id: "env-empty" },
        "No application yet: rollouts are grouped by " + d.groupBy + "; none you may see carries it."));
    }
    d.apps.forEach(function (app) {
      var lane = el("div", { "class": "env-lane" });
      app.environments.forEach(function (p, i) {
        if (i) lane.appendChild(el("span", { "class": "env-arrow", "aria-hidden": "true" }, "→"));
        lane.appendChild(place(p));
      });
      root.appendChild(el("section", { "class": "env-app", "data-app": app.app },
        el("h2", { "class": "env-app-name" }, app.app, el("span", { "class": "muted" }, " · " + app.count + (app.count === 1 ? " environment" : " environments"))),
        lane));
    });
    var found = document.getElementById("env-found");
    if (d.commit) {
      found.textContent = d.found.length ? d.commit + " runs in " + d.found.map(function (f) { return f.app + " " + f.environment; }).join(", ")
        : d.commit + " runs nowhere you may see";
    } else found.textContent = "";
  }

  function refresh() {
    var q = input.value.trim();
    fetch("/api/v1/environments" + (q ? "?commit=" + encodeURIComponent(q) : ""), { credentials: "same-origin" })
      .then(function (r) { if (r.status === 401) { location.reload(); return null; } return r.ok ? r.json() : null; })
      .then(function (d) { if (d) draw(d); });
  }
  function soon() { clearTimeout(pending); pending = setTimeout(refresh, 750); }

  document.getElementById("env-search-form").addEventListener("submit", function (event) {
    event.preventDefault();
    var q = input.value.trim();
    history.replaceState(null, "", q ? "?commit=" + encodeURIComponent(q) : location.pathname);
    refresh();
  });
  draw(doc);
  var live = Live.connect("/ws/fleet/", { snapshot: function () {}, update: soon });
  live.start(doc.streamId);
})();
