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
  var perms = initialDoc.permissions || permitted.permissions || {};
  function rule(b) {
    if (b.allowed !== undefined) return { allowed: !!b.allowed, deniedReason: b.deniedReason || "" };
    if (perms[b.name]) return perms[b.name];
    return { allowed: permitted.allowed.indexOf(b.name) >= 0, deniedReason: "" };
  }
  function allowed(b) { return !!rule(b).allowed; }
  // Guard rails (the server's `guard` on each button): a freeze, approvals, a reason.
  function guard(b) { return (b && b.guard) || {}; }
  function mayBreakGlass() { return !!(perms["break-glass"] && perms["break-glass"].allowed); }
  function frozen(b) { return guard(b).frozen || null; }
  function barLabel(b) { return guard(b).buttonLabel || label(b); }
  function why(b) {
    if (!allowed(b)) return rule(b).deniedReason || "Your role may not " + plain(b.label).toLowerCase() + " this rollout.";
    if (!b.applies) return b.reason || "Does not apply to the rollout's current state.";
    if (frozen(b) && !mayBreakGlass()) return frozen(b).text + ". Only someone who may break the glass can " + plain(b.label).toLowerCase() + " now.";
    return "";
  }

  // A disabled control stays focusable (aria-disabled) so keyboard and pointer users can read its reason:
  // the tooltip, and the text the button's aria-describedby points to.
  function control(b, cls, params, source) {
    var reason = busy ? "Another action is being sent." : why(b);
    var id = "why-" + source + "-" + b.name;
    var button = el("button", { type: "button", "class": cls + (reason ? " is-disabled" : ""), "data-action": b.name,
      "data-source": source, "aria-disabled": reason ? "true" : null, title: reason || null,
      "aria-describedby": reason ? id : null, "data-guarded": guard(b).approvals || frozen(b) ? "true" : null }, barLabel(b));
    if (!reason && frozen(b)) { button.classList.add("is-frozen"); button.title = frozen(b).breakGlassTitle; }
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
    // A freeze on: the server's words above the bar (whether this user may break the glass decides which).
    var note = document.getElementById("action-freeze"), freeze = actions && actions.freeze;
    if (note) {
      note.hidden = !freeze;
      note.textContent = freeze ? (mayBreakGlass() ? freeze.breakGlassText : freeze.viewerText) : "";
    }
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
    var g = guard(b), ice = frozen(b);
    var reasonBox = document.getElementById("action-confirm-reason");
    var reasonInput = reasonBox.querySelector("input");
    var needReason = !!(g.reasonRequired || ice);
    reasonBox.hidden = !needReason;
    reasonInput.value = "";
    reasonInput.placeholder = g.reasonHint || (ice ? "why the freeze must be broken" : "why");
    reasonInput.required = !!(ice || (g.reasonRequired && g.approvals === 0));
    var note = document.getElementById("action-confirm-guard");
    var words = [];
    if (ice) words.push(ice.text + ". Breaking the glass is audited and notified at once; say why.");
    if (g.approvals) words.push("This asks " + g.approvers.join(", ") + " for " + g.approvals + (g.approvals === 1 ? " approval" : " approvals") +
      ". It runs as you when the last approval lands, and is void if the rollout moves on first.");
    note.hidden = !words.length;
    note.textContent = words.join(" ");
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
    document.getElementById("action-confirm-go").textContent = g.approvals ? "Request approval" : ice ? "Break glass" :
      warnings.length ? plain(b.label) + " anyway" : plain(b.label);
    // Asking for approval sends nothing to the cluster: a plain primary button, not the red one.
    document.getElementById("action-confirm-go").className = g.approvals ? "btn primary" : "btn danger solid";
    dialog.onclose = function () { if (dialog.returnValue === "confirm") done(chosen(), reasonInput.value.trim()); };
    dialog.returnValue = "";
    dialog.showModal();
  }

  function start(name, params, finding) {
    var b = byName(name);
    if (!b || busy) return;
    var reason = why(b);
    if (reason && !(finding && allowed(b))) { say(reason, "warning"); return; }
    var g = guard(b);
    if (b.confirm || (b.warnings && b.warnings.length) || (b.choices && b.choices.length) || g.approvals || g.reasonRequired || frozen(b)) {
      confirmFirst(b, params, finding, function (p, reason) { send(b, p, reason); });
    } else {
      send(b, params, "");
    }
  }

  function send(b, params, reason) {
    busy = true; render();
    var g = guard(b), ice = !!frozen(b);
    say((g.approvals ? "Requesting " : "") + plain(b.label) + "…", "");
    var url = g.approvals ? "/api/v1/requests" : base + "/actions/" + encodeURIComponent(b.name);
    var body = { seen: (actions && actions.seen) || {}, params: params || {}, reason: reason || "", breakGlass: ice };
    if (g.approvals) { body.rollout = key; body.action = b.name; }
    fetch(url, {
      method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf(), "Idempotency-Key": newKey() },
      body: JSON.stringify(body)
    }).then(function (response) {
      return response.json().catch(function () { return {}; }).then(function (body) { report(response.status, b, body); });
    }).catch(function () {
      say("The request did not reach the server. Nothing is known to have happened; check the rollout before trying again.", "warning");
    }).then(function () { busy = false; render(); });
  }

  function report(status, b, body) {
    var detail = body.detail || body.error || "";
    if (status === 201) { say("Requested: waiting for " + body.required + (body.required === 1 ? " approval" : " approvals") + " (" + body.approvers.join(", ") + ").", ""); loadRequests(); }
    else if (body.code) say((status === 422 ? "Refused: " : "Nothing was sent — ") + detail, "warning");
    else if (status === 200) say("Done: " + detail, "");
    else if (status === 202) say("Accepted; still running. The outcome will appear under Recent actions.", "");
    else if (status === 409) say("Nothing was sent — " + detail + ". Look at the rollout again before deciding.", "warning");
    else if (status === 422) say("Refused: " + detail, "warning");
    else if (status === 429) say("Slow down: " + detail, "warning");
    else if (status === 403) say("You may not " + plain(b.label).toLowerCase() + " this rollout.", "critical");
    else if (status === 401) location.reload();
    else say("Failed: " + detail, "critical");
  }

  // The open approval requests: fetched (with this user's right to vote) on load and whenever the
  // actions socket rings for a request of this rollout.
  function loadRequests() {
    fetch("/api/v1/requests?open=1&rollout=" + encodeURIComponent(key), { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.json() : { requests: [] }; })
      .then(function (body) { showRequests(body.requests || []); });
  }

  function showRequests(list) {
    var box = document.getElementById("approval-requests");
    if (!box) return;
    box.hidden = !list.length;
    fill(document.getElementById("approval-request-list"), list.map(requestItem));
  }

  function requestItem(r) {
    var comment = el("input", { type: "text", "class": "request-comment", maxlength: "2000", placeholder: "comment (optional)", "aria-label": "Comment" });
    var names = r.approvals.map(function (a) { return a.approver; });
    return el("li", { "class": "request", id: "request-" + r.id, "data-request": r.id, "data-state": r.state },
      el("div", { "class": "request-head" },
        el("b", { text: r.requester }), " asks to ", el("b", { text: r.action }),
        r.breakGlass ? el("span", { "class": "badge tone-critical", text: "break glass: " + r.breakGlass }) : null),
      r.reason ? el("div", { "class": "request-reason", text: "“" + r.reason + "”" }) : null,
      el("div", { "class": "request-meta muted" },
        el("span", { "data-field": "approvals", text: names.length + " of " + r.required + (r.required === 1 ? " approval" : " approvals") + (names.length ? " (" + names.join(", ") + ")" : "") }),
        r.seen && r.seen.checksum ? " · revision " + r.seen.checksum : "",
        " · from " + r.approvers.join(", ") + " · expires ",
        el("time", { datetime: r.expiresAt, text: new Date(r.expiresAt).toLocaleString() })),
      r.mayApprove || r.mayDeny ? el("div", { "class": "request-vote" }, comment,
        r.mayApprove ? voteButton(r, "approve", "Approve", comment) : null,
        r.mayDeny ? voteButton(r, "deny", r.requester === permitted.user ? "Withdraw" : "Deny", comment) : null) : null,
      !r.mayApprove && r.whyNot ? el("div", { "class": "muted request-why", text: r.whyNot }) : null);
  }

  function voteButton(r, vote, text, comment) {
    var button = el("button", { type: "button", "class": "btn" + (vote === "approve" ? " primary" : ""), "data-vote": vote }, text);
    button.addEventListener("click", function () {
      var seen = (actions && actions.seen) || {};
      // A Canary's request is bound to the revision its gate waits for, which the item names.
      if (r.seen && r.seen.checksum) seen = { checksum: r.seen.checksum };
      button.disabled = true;
      fetch("/api/v1/requests/" + r.id + "/" + vote, {
        method: "POST", credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
        body: JSON.stringify({ seen: seen.checksum ? seen : { podHash: seen.podHash, stepIndex: seen.stepIndex }, comment: comment.value })
      }).then(function (response) { return response.json().then(function (body) { return [response.status, body]; }); })
        .then(function (answer) {
          var body = answer[1];
          if (answer[0] === 200) say(vote === "approve" ? (body.state === "approved" ? "Approved: " + body.detail : "Approved; " + body.approvals.length + " of " + body.required + ".") : "Denied.", "");
          else say("Not recorded — " + (body.error || "the server refused"), "warning");
          loadRequests();
        });
    });
    return button;
  }

  function refreshAudit() {
    fetch(base + "/audit", { credentials: "same-origin" }).then(function (r) { return r.ok ? r.json() : { entries: [] }; })
      .then(function (body) { recent = body.entries || []; showEntries(recent); });
  }
  loadRequests();

  var PAST = {
    "promote": "promoted", "promote-full": "fully promoted", "skip-current-step": "skipped a step of",
    "abort": "aborted", "retry": "retried", "pause": "paused", "resume": "resumed", "restart": "restarted",
    "undo": "rolled back", "unwedge": "unwedged"
  };

  function entryItem(e) {
    var outcome = e.outcome === "accepted" ? "running" : e.outcome;
    var verb = e.outcome === "done" ? PAST[e.action] || e.action : GUARD_VERBS[e.outcome] ? GUARD_VERBS[e.outcome] + " " + e.action : "tried to " + e.action;
    if (e.guard && e.guard.breakGlass && e.outcome !== "denied") verb += " (broke the glass of “" + e.guard.breakGlass + "”)";
    if (e.guard && e.guard.approvers && e.guard.approvers.length) verb += " (approved by " + e.guard.approvers.join(", ") + ")";
    return el("li", { "class": "outcome-" + outcome, "data-entry": e.id },
      el("time", { "class": "t", datetime: e.at, text: new Date(e.at).toLocaleString() }),
      el("span", { "class": "who", text: e.actor + " " + verb }),
      el("span", { "class": "badge", text: outcome }),
      el("span", { "class": "muted", text: (e.detail || "") + (e.reason && e.outcome !== "requested" ?
        (e.outcome === "approved" || e.outcome === "rejected" ? " — comment: “" : " — reason: “") + e.reason + "”" : "") }));
  }

  var GUARD_VERBS = { requested: "requested approval to", approved: "approved", rejected: "denied the request to",
    expired: "(expired) request to", voided: "(void) request to" };

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
      if (message.type === "request") {
        loadRequests(); refreshAudit();
        var closed = { approved: ["A request was approved; its action runs as the requester.", ""],
          denied: ["A request was denied.", "warning"], expired: ["A request expired.", "warning"],
          void: ["A request is void: the rollout moved on.", "warning"] }[message.state];
        if (closed) say(closed[0], closed[1]);
      }
    };
    socket.onclose = function (event) {
      if (event.code === 4401 || event.code === 4403) return;
      setTimeout(function () { follow(attempt + 1); }, Math.min(15000, 500 * Math.pow(2, attempt)));
    };
    socket.onopen = function () { attempt = 0; };
  })(0);
})();
