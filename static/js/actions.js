// The rollout page's action bar and confirmation dialog: a plain renderer of the page document's
// `actions` (dashboard/web/rollout.py) — which buttons exist, whether each applies now and why not,
// whether this user may run it and why not, the parameters it sends, the choices a user picks from,
// the text to confirm and the open findings a promote would go past. Nothing here decides any of that.
// The document arrives from rollout.js (first paint and every live update, on its one websocket) as a
// `rolloutpage` event; a finding's button (rendered by rollout.js with data-fix) runs its action with
// the finding's own `actionParams`. Every POST carries the document's `seen` and an idempotency key,
// so a double click or a stale page cannot act twice (the server answers 409 with what changed).
// Outcomes of everyone's actions arrive on /ws/actions/… and list under "Recent actions".
// All text reaches the page through textContent (UI.el), never as markup.
(function () {
  "use strict";
  var UI = window.UI, el = UI.el, fill = UI.fill, icon = UI.icon;
  var permitted = UI.readJSON("action-permissions");
  if (!permitted) return;
  var key = permitted.key;
  var bar = document.getElementById("rollout-actions");
  var base = "/api/v1/rollouts/" + key.split("/").map(encodeURIComponent).join("/");
  var actions = null, findings = [], busy = false;

  function label(b) { return (b && b.label) || ""; }
  function plain(text) { return String(text || "").replace(/…$/, ""); }
  function byName(name) {
    return ((actions && actions.buttons) || []).filter(function (b) { return b.name === name; })[0] || null;
  }
  // Per user: the server's answer on the button (first paint), else the same answer the page was served
  // with (live updates go to every viewer alike and carry no per-user part).
  var initialDoc = UI.readJSON("initial") || {};
  var perms = initialDoc.permissions || {};
  function rule(b) {
    if (b.allowed !== undefined) return { allowed: !!b.allowed, deniedReason: b.deniedReason || "" };
    if (perms[b.name]) return perms[b.name];
    return { allowed: permitted.allowed.indexOf(b.name) >= 0, deniedReason: "" };
  }
  function allowed(b) { return !!rule(b).allowed; }
  function why(b) {
    if (!allowed(b)) return rule(b).deniedReason || "Your role may not " + plain(b.label).toLowerCase() + " this rollout.";
    if (!b.applies) return b.reason || "Does not apply to the rollout's current state.";
    return "";
  }

  // A disabled control stays focusable (aria-disabled) so keyboard and pointer users can read its reason:
  // the tooltip, and the text the button's aria-describedby points to.
  function control(b, cls, params, source) {
    var reason = busy ? "Another action is being sent." : why(b);
    var id = "why-" + source + "-" + b.name;
    var button = el("button", { type: "button", "class": cls + (reason ? " is-disabled" : ""), "data-action": b.name,
      "data-source": source, "aria-disabled": reason ? "true" : null, title: reason || null,
      "aria-describedby": reason ? id : null }, label(b));
    button._params = params;
    return [button, reason ? el("span", { "class": "sr-only", id: id, text: reason }) : null];
  }

  function render() {
    if (!bar) return;
    var suggested = actions && actions.suggested;
    var buttons = (actions && actions.buttons) || [];
    var suggest = document.getElementById("action-suggest");
    var fix = suggested && byName(suggested.action);
    suggest.hidden = !fix;
    if (fix) {
      fill(suggest, control(fix, "btn primary", suggested.params || {}, "suggest"),
        el("span", { "class": "suggest-text", title: "Suggested fix for “" + suggested.title + "”" }, el("b", { text: "Suggested fix" }), " for “" + suggested.title + "”"));
    }
    // The suggested action sits in the suggestion, not a second time in the row.
    var row = buttons.filter(function (b) { return !fix || b.name !== fix.name; });
    fill(document.getElementById("action-buttons"),
      row.filter(function (b) { return !b.destructive; }).map(function (b) { return control(b, "btn", b.params || {}, "bar"); }));
    var danger = row.filter(function (b) { return b.destructive; });
    fill(document.getElementById("action-danger"), danger.map(function (b) { return control(b, "btn danger", b.params || {}, "bar"); }));
    document.getElementById("action-danger").hidden = !danger.length;
    // The fix buttons inside the finding cards (drawn by rollout.js) follow the same rules.
    Array.prototype.forEach.call(document.querySelectorAll("#findings [data-fix]"), function (node, i) {
      var b = byName(node.getAttribute("data-fix"));
      var reason = !b ? "This action is not available here." : busy ? "Another action is being sent." : allowed(b) ? "" : why(b);
      node.setAttribute("aria-disabled", reason ? "true" : "false");
      node.classList.toggle("is-disabled", !!reason);
      if (reason) node.setAttribute("title", reason); else node.removeAttribute("title");
      var note = node.parentNode.querySelector("[data-fix-reason]");
      if (note) { note.id = "why-fix-" + i; note.textContent = reason; note.hidden = !reason; }
      if (reason && note) node.setAttribute("aria-describedby", note.id); else node.removeAttribute("aria-describedby");
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

  // The dialog names exactly what will be sent: the server's confirmation text, each parameter (the
  // ReplicaSet, the revision), the user's pick where the server offers choices, and every open finding a
  // promote would go past.
  function confirmFirst(b, params, finding, done) {
    var dialog = document.getElementById("action-confirm");
    var choiceBox = document.getElementById("action-confirm-choice");
    var select = choiceBox.querySelector("select");
    var choices = b.choices || [];
    var choiceKey = choices.length ? Object.keys(b.params || {})[0] || (b.name === "undo" ? "revision" : "replicaSet") : null;
    var fixed = choiceKey && params[choiceKey] !== undefined && params[choiceKey] !== null && finding;
    choiceBox.hidden = !choices.length || !!fixed;
    choiceBox.querySelector(".label").textContent = choiceKey === "revision" ? "Revision" : "ReplicaSet";
    fill(select, choices.map(function (c) { return el("option", { value: String(c.value) }, c.label); }));
    if (choiceKey && params[choiceKey] !== undefined && params[choiceKey] !== null) select.value = String(params[choiceKey]);
    function chosen() {
      var out = {};
      Object.keys(params).forEach(function (k) { out[k] = params[k]; });
      if (choiceKey && !fixed) out[choiceKey] = typeof params[choiceKey] === "number" || choiceKey === "revision" ? Number(select.value) : select.value;
      return out;
    }
    function text() {
      var p = chosen();
      fill(document.getElementById("action-confirm-text"),
        el("p", { text: b.confirm || (plain(b.label) + " " + key.split("/")[2] + ".") }),
        Object.keys(p).length ? el("dl", { "class": "confirm-params" }, Object.keys(p).map(function (k) {
          return [el("dt", { text: k === "replicaSet" ? "ReplicaSet" : k === "revision" ? "Revision" : k }), el("dd", { "class": "mono", text: String(p[k]) })];
        })) : null,
        finding ? el("p", { "class": "muted", text: "Suggested by the finding “" + finding.title + "”." }) : null);
    }
    select.onchange = text;
    text();
    var warnings = b.warnings || [];
    var advice = document.getElementById("action-confirm-advice");
    advice.hidden = !warnings.length;
    fill(advice, warnings.length ? [el("b", { text: "Open findings this would go past:" }),
      el("ul", null, warnings.map(function (w) {
        return el("li", { "data-warning": w.code }, icon(w.severity === "critical" ? "critical" : "warning"), " ", w.severity + ": " + w.title);
      }))] : null);
    document.getElementById("action-confirm-title").textContent = plain(b.label) + " " + key.split("/")[2] + "?";
    document.getElementById("action-confirm-go").textContent = warnings.length ? plain(b.label) + " anyway" : plain(b.label);
    dialog.onclose = function () { if (dialog.returnValue === "confirm") done(chosen()); };
    dialog.returnValue = "";
    dialog.showModal();
  }

  function start(name, params, finding) {
    var b = byName(name);
    if (!b || busy) return;
    var reason = why(b);
    if (reason && !(finding && allowed(b))) { say(reason, "warning"); return; }
    if (b.confirm || (b.warnings && b.warnings.length) || (b.choices && b.choices.length)) {
      confirmFirst(b, params, finding, function (p) { send(b, p); });
    } else {
      send(b, params);
    }
  }

  function send(b, params) {
    busy = true; render();
    say(plain(b.label) + "…", "");
    fetch(base + "/actions/" + encodeURIComponent(b.name), {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf(), "Idempotency-Key": newKey() },
      body: JSON.stringify({ seen: (actions && actions.seen) || {}, params: params || {} })
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) { report(response.status, b, body); });
    }).catch(function () {
      say("The request did not reach the server. Nothing is known to have happened; check the rollout before trying again.", "warning");
    }).then(function () { busy = false; render(); });
  }

  function report(status, b, body) {
    var detail = body.detail || body.error || "";
    if (status === 200) say("Done: " + detail, "");
    else if (status === 202) say("Accepted; still running. The outcome will appear under Recent actions.", "");
    else if (status === 409) say("Nothing was sent — " + detail + ". Look at the rollout again before deciding.", "warning");
    else if (status === 422) say("Refused: " + detail, "warning");
    else if (status === 429) say("Slow down: " + detail, "warning");
    else if (status === 403) say("You may not " + plain(b.label).toLowerCase() + " this rollout.", "critical");
    else if (status === 401) location.reload();
    else say("Failed: " + detail, "critical");
  }

  var PAST = {
    "promote": "promoted", "promote-full": "fully promoted", "skip-current-step": "skipped a step of",
    "abort": "aborted", "retry": "retried", "pause": "paused", "resume": "resumed", "restart": "restarted",
    "undo": "rolled back", "unwedge": "unwedged"
  };

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
    if (list) fill(list, entries.length ? entries.map(entryItem) : el("li", { "class": "muted", text: "No actions yet." }));
  }

  var recent = [];
  function addEntry(e) {
    recent = [e].concat(recent.filter(function (r) { return r.id !== e.id; })).slice(0, 50);
    showEntries(recent);
  }

  fetch(base + "/audit", { credentials: "same-origin" }).then(function (r) { return r.ok ? r.json() : { entries: [] }; })
    .then(function (body) { recent = body.entries || []; showEntries(recent); });

  // The page document: rollout.js's first paint (read here too, whichever script runs first) and every
  // live update it receives on its websocket — this script opens no second one.
  function take(page) {
    if (!page || page.kind === "canary") return;
    actions = page.actions || null;
    findings = page.findings || [];
    render();
  }
  take(initialDoc.page);
  document.addEventListener("rolloutpage", function (event) { take(event.detail); });

  document.addEventListener("click", function (event) {
    var target = event.target.closest ? event.target.closest("[data-action], [data-fix]") : null;
    if (!target || !document.body.contains(target)) return;
    if (target.hasAttribute("data-fix")) {
      var code = target.closest("[data-code]");
      var finding = findings.filter(function (f) { return code && f.code === code.getAttribute("data-code"); })[0];
      start(target.getAttribute("data-fix"), (finding && finding.actionParams) || {}, finding || { title: "" });
    } else if (bar && bar.contains(target)) {
      start(target.getAttribute("data-action"), target._params || {}, null);
    }
  });

  var path = key.split("/").map(encodeURIComponent).join("/") + "/";
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
})();
