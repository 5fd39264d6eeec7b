// The rollout page's action bar: only the actions the user holds (rendered by the server), enabled by
// the rollout's live state; destructive ones ask first, naming what will happen. Every request says
// what the user saw (pod hash, step index, status, resourceVersion) and carries an idempotency key, so
// a double click or a stale page cannot act twice: the server answers 409 with what changed.
// Outcomes of everyone's actions on this rollout arrive live on /ws/actions/… and list under
// "Recent actions". All text reaches the page through textContent (UI.el), never as markup.
(function () {
  "use strict";
  var UI = window.UI, el = UI.el, fill = UI.fill;
  var permitted = UI.readJSON("action-permissions");
  if (!permitted) return;
  var key = permitted.key;
  var bar = document.getElementById("rollout-actions");  // absent when the user may run nothing
  var base = "/api/v1/rollouts/" + key.split("/").map(encodeURIComponent).join("/");
  var view = null, busy = false;

  var LABELS = {
    "promote": "Promote", "promote-full": "Promote full", "skip-current-step": "Skip step",
    "abort": "Abort", "retry": "Retry", "pause": "Pause", "resume": "Resume", "restart": "Restart",
    "undo": "Roll back…", "unwedge": "Unwedge…"
  };
  var PAST = {
    "promote": "promoted", "promote-full": "fully promoted", "skip-current-step": "skipped a step of",
    "abort": "aborted", "retry": "retried", "pause": "paused", "resume": "resumed", "restart": "restarted",
    "undo": "rolled back", "unwedge": "unwedged"
  };

  function steps(v) { return (v && v.steps) ? v.steps.length : 0; }
  function aborted(v) { return !!v.aborted; }
  function promoted(v) { return v.currentPodHash && v.currentPodHash === v.stableRS; }

  function orphans(v) {
    var keep = [v.currentPodHash, v.stableRS], out = [];
    (v.revisions || []).forEach(function (rev) {
      (rev.replicaSets || []).forEach(function (rs) {
        var tags = rs.tags || [];
        if ((rs.replicas || 0) > 0 && keep.indexOf(rs.hash) < 0 && tags.indexOf("active") < 0 && tags.indexOf("preview") < 0) {
          out.push({ name: rs.name, hash: rs.hash, replicas: rs.replicas, revision: rev.revision });
        }
      });
    });
    return out;
  }

  function olderRevisions(v) {
    return (v.revisions || []).filter(function (rev) { return rev.revision && rev.revision !== v.revision; })
      .map(function (rev) { return rev.revision; });
  }

  // When a button applies (mirrors the upstream dashboard's and Argo CD's enablement).
  var APPLIES = {
    "promote": function (v) { return v.status === "Paused" || v.paused || (v.strategy === "Canary" && (v.currentStepIndex || 0) < steps(v)); },
    "promote-full": function (v) { return !promoted(v) || v.paused; },
    "skip-current-step": function (v) { return v.strategy === "Canary" && steps(v) > 0 && (v.currentStepIndex || 0) < steps(v); },
    "abort": function (v) { return !aborted(v) && !promoted(v); },
    "retry": function (v) { return aborted(v); },
    "pause": function (v) { return !v.paused; },
    "resume": function (v) { return v.paused || v.status === "Paused"; },
    "restart": function () { return true; },
    "undo": function (v) { return olderRevisions(v).length > 0; },
    "unwedge": function (v) { return orphans(v).length > 0; }
  };

  function seen(v) {
    return { podHash: v.currentPodHash || null, stepIndex: v.currentStepIndex === undefined ? null : v.currentStepIndex,
      status: v.status, paused: !!v.paused, aborted: !!v.aborted, resourceVersion: v.resourceVersion || "" };
  }

  function buttons() { return bar ? Array.prototype.slice.call(bar.querySelectorAll("button[data-action]")) : []; }

  function refresh() {
    if (!bar) return;
    buttons().forEach(function (b) {
      var name = b.getAttribute("data-action");
      b.textContent = LABELS[name] || name;
      b.hidden = !view;
      b.disabled = busy || !view || !APPLIES[name](view);
    });
    var suggest = document.getElementById("action-suggest");
    var fix = view && (view.findings || []).filter(function (f) { return f.action && permitted.allowed.indexOf(f.action) >= 0; })[0];
    suggest.hidden = !fix;
    if (fix) {
      fill(suggest, el("button", { type: "button", "class": "btn primary", "data-fix": fix.action, disabled: busy }, LABELS[fix.action] || fix.action),
        el("span", null, el("b", { text: "Suggested fix" }), " for " + (fix.severity ? fix.severity + " finding " : "") + "“" + fix.title + "”"));
    }
    // The same fix offered inside the finding's card (rendered by rollout.js).
    Array.prototype.slice.call(document.querySelectorAll("#findings [data-fix]")).forEach(function (b) {
      b.textContent = LABELS[b.getAttribute("data-fix")] || b.textContent;
      b.disabled = busy || !view;
    });
  }

  function newKey() {
    if (window.crypto && window.crypto.randomUUID) return window.crypto.randomUUID();
    return Date.now().toString(36) + Math.random().toString(36).slice(2);
  }

  function csrf() {
    var match = document.cookie.match(/(?:^|; )csrftoken=([^;]*)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function say(text, tone) {
    var out = document.getElementById("action-result");
    out.hidden = false;
    out.className = "note action-result" + (tone ? " " + tone : "");
    out.textContent = text;
  }

  function describe(name, v, choice) {
    var hash = v.currentPodHash || "the new revision";
    switch (name) {
      case "abort": return "Abort the update to " + hash + ": traffic and replicas go back to the stable ReplicaSet " + (v.stableRS || "") + ". The rollout will show Degraded until it is retried or a new revision arrives.";
      case "promote-full": return "Skip every remaining step, pause and analysis of " + hash + " and make it the stable version at 100% now.";
      case "undo": return "Roll the pod template back to revision " + choice + ". This starts a new update through all the steps.";
      case "unwedge": return "Scale the orphaned ReplicaSet " + choice + " to 0 replicas. It is neither stable nor the current canary.";
      default: return "";
    }
  }

  function confirmFirst(name, done) {
    var dialog = document.getElementById("action-confirm");
    var choiceBox = document.getElementById("action-confirm-choice");
    var select = choiceBox.querySelector("select");
    var advice = document.getElementById("action-confirm-advice");
    var options = name === "undo" ? olderRevisions(view).map(function (r) { return { value: String(r), label: "revision " + r }; })
      : name === "unwedge" ? orphans(view).map(function (o) { return { value: o.name, label: o.name + " (" + o.replicas + " replicas, revision " + o.revision + ")" }; })
      : [];
    choiceBox.hidden = options.length === 0;
    choiceBox.querySelector(".label").textContent = name === "undo" ? "Revision" : "ReplicaSet";
    fill(select, options.map(function (o) { return el("option", { value: o.value }, o.label); }));
    function text() {
      document.getElementById("action-confirm-text").textContent = describe(name, view, select.value);
    }
    select.onchange = text;
    text();
    advice.hidden = name !== "unwedge";
    advice.textContent = "Afterwards, let the abort converge and do a single clean run. Do not keep re-running: each re-run re-triggers the same race.";
    document.getElementById("action-confirm-title").textContent = (LABELS[name] || name).replace("…", "") + " " + key.split("/")[2] + "?";
    document.getElementById("action-confirm-go").textContent = (LABELS[name] || name).replace("…", "");
    dialog.onclose = function () { if (dialog.returnValue === "confirm") done(select.value); };
    dialog.returnValue = "";
    dialog.showModal();
  }

  function start(name) {
    if (!view || busy) return;
    if (permitted.confirm.indexOf(name) >= 0) confirmFirst(name, function (choice) { send(name, choice); });
    else send(name, null);
  }

  function send(name, choice) {
    var params = name === "undo" ? { revision: Number(choice) } : name === "unwedge" ? { replicaSet: choice } : {};
    busy = true; refresh();
    say((LABELS[name] || name).replace("…", "") + "…", "");
    fetch(base + "/actions/" + encodeURIComponent(name), {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf(), "Idempotency-Key": newKey() },
      body: JSON.stringify({ seen: seen(view), params: params })
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) { report(response.status, name, body); });
    }).catch(function () {
      say("The request did not reach the server. Nothing is known to have happened; check the rollout before trying again.", "warning");
    }).then(function () { busy = false; refresh(); });
  }

  function report(status, name, body) {
    var detail = body.detail || body.error || "";
    if (status === 200) say("Done: " + detail, "");
    else if (status === 202) say("Accepted; still running. The outcome will appear under Recent actions.", "");
    else if (status === 409) say("Nothing was sent — " + detail + ". Look at the rollout again before deciding.", "warning");
    else if (status === 422) say("Refused: " + detail, "warning");
    else if (status === 429) say("Slow down: " + detail, "warning");
    else if (status === 403) say("You may not " + name + " this rollout.", "critical");
    else if (status === 401) location.reload();
    else say("Failed: " + detail, "critical");
    if (name === "unwedge" && status === 200) {
      say("Done: the orphaned ReplicaSet is scaling to 0. Watch the abort converge, then do a single clean run — repeated re-runs re-trigger the same race.", "");
    }
  }

  function entryItem(e) {
    var outcome = e.outcome === "accepted" ? "running" : e.outcome;
    var verb = e.outcome === "done" ? PAST[e.action] || e.action : "tried to " + e.action;
    return el("li", { "class": "outcome-" + outcome, "data-entry": e.id },
      el("time", { "class": "t", datetime: e.at, text: new Date(e.at).toLocaleString() }),
      el("span", { "class": "who", text: e.actor + " " + verb }),
      el("span", { "class": "badge", text: outcome }),
      el("span", { "class": "muted", text: e.detail || "" }));
  }

  function showEntries(entries) {
    var list = document.getElementById("recent-actions");
    fill(list, entries.length ? entries.map(entryItem) : el("li", { "class": "muted", text: "No actions yet." }));
  }

  var recent = [];
  function addEntry(e) {
    recent = [e].concat(recent.filter(function (r) { return r.id !== e.id; })).slice(0, 50);
    showEntries(recent);
  }

  fetch(base + "/audit", { credentials: "same-origin" }).then(function (r) { return r.ok ? r.json() : { entries: [] }; })
    .then(function (body) { recent = body.entries || []; showEntries(recent); });

  var path = key.split("/").map(encodeURIComponent).join("/") + "/";
  if (bar) {  // the buttons follow the rollout's live state; a viewer has none to enable
    Live.connect("/ws/rollouts/" + path, {
      snapshot: function (m) { view = m.view; refresh(); },
      update: function (m) { view = m.view; refresh(); }
    }).start(null);
    // Fix buttons (the suggestion here, and the finding cards rollout.js redraws on every update).
    document.addEventListener("click", function (event) {
      var target = event.target.closest ? event.target.closest("[data-fix]") : null;
      if (target && !target.disabled) start(target.getAttribute("data-fix"));
    });
  }

  (function follow(attempt) {
    var socket = new WebSocket((location.protocol === "https:" ? "wss://" : "ws://") + location.host + "/ws/actions/" + path);
    socket.onmessage = function (event) {
      var message = JSON.parse(event.data);
      if (message.type === "action") addEntry(message.entry);
    };
    socket.onclose = function (event) {
      if (event.code === 4401 || event.code === 4403) return;
      setTimeout(function () { follow(attempt + 1); }, Math.min(15000, 500 * Math.pow(2, attempt)));
    };
    socket.onopen = function () { attempt = 0; };
  })(0);

  buttons().forEach(function (b) { b.addEventListener("click", function () { start(b.getAttribute("data-action")); }); });
  refresh();
})();
