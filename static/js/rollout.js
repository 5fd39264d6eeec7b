// Rollout page: draws the presented page document (dashboard/web/rollout.py) and keeps it live.
(function () {
  "use strict";
  var el = UI.el, icon = UI.icon, fill = UI.fill;
  var initial = UI.readJSON("initial");
  var key = UI.readJSON("rollout-key");
  var current = null;

  function pct(v) { return v === null || v === undefined ? "—" : v + " %"; }

  function badges(h) {
    var phase = el("span", { "class": "pair" + (h.tone ? " " + UI.toneClass(h.tone) : ""), "data-badge": "phase", title: "The rollout's own phase (Argo Rollouts)" },
      el("span", { "class": "k", text: "Rollout" }), el("span", null, icon(h.icon), el("span", { "data-field": "status", text: h.status })));
    var argo = el("span", { "class": "pair", "data-badge": "argocd", title: "Health as Argo CD reports it" },
      el("span", { "class": "k", text: h.argocd.source === "computed" ? "Argo CD (computed)" : "Argo CD" }),
      el("span", null, icon(h.argocd.observed ? h.argocd.icon : "unknown"), el("span", { text: h.argocd.health })),
      h.argocd.sync ? el("span", { text: h.argocd.sync }) : null);
    // Argo CD's health only where an Application manages the rollout (the server says which).
    var managed = h.argocd && h.argocd.health && (h.argocd.managed || h.argocd.source === "application");
    var parts = managed ? [phase, argo] : [phase];
    if (h.reason) parts.push(el("span", { "class": "muted", "data-field": "message", text: "“" + h.reason + "”" }));
    if (managed && h.argocd.note) parts.push(el("span", { "class": "health-note", text: h.argocd.note }));
    if (h.findings.critical) parts.push(el("span", { "class": "badge tone-critical" }, icon("critical"), h.findings.critical + " critical"));
    if (h.findings.warning) parts.push(el("span", { "class": "badge tone-warning" }, icon("warning"), h.findings.warning + " warning" + (h.findings.warning > 1 ? "s" : "")));
    return parts;
  }

  function meta(h) {
    function item(label, value, field) {
      return el("span", null, label + " ", el("b", { "data-field": field || null, text: value }));
    }
    var out = [item("Strategy", h.strategy + (h.trafficRouter ? " · " + h.trafficRouter : ""))];
    if (h.step) out.push(item("Step", h.step, "step"));
    if (h.strategy === "Canary") {
      out.push(item("Weight", pct(h.setWeight) + " desired", "setWeight"));
      out.push(item("Actual", pct(h.actualWeight) + (h.weightSource === "replicas" ? " (replica ratio)" : ""), "actualWeight"));
    }
    if (h.canaryImage) out.push(item("Image", h.canaryImage));
    if (h.stableImage) out.push(item("Stable", h.stableImage));
    out.push(item("Release age", h.releaseAge));
    return out;
  }

  // Every finding with a remedy carries its button: the action and its parameters come with the finding
  // (`action`, `actionParams`); actions.js runs it, and marks it disabled with the reason when this user
  // may not (the reason is written beside it, not only in a tooltip).
  function fixButton(f, page) {
    if (!f.action) return null;
    var b = ((page.actions && page.actions.buttons) || []).filter(function (x) { return x.name === f.action; })[0];
    var text = b ? b.label : f.action.charAt(0).toUpperCase() + f.action.slice(1);
    var target = f.actionParams && (f.actionParams.replicaSet || f.actionParams.revision);
    return el("div", { "class": "fix" },
      el("button", { type: "button", "class": "btn primary", "data-fix": f.action }, text),
      target ? el("span", { "class": "muted mono", text: String(target) }) : null,
      el("span", { "class": "fix-reason muted", "data-fix-reason": "", hidden: true }));
  }

  function findings(list, page) {
    if (!list.length) {
      // A page whose own status is a failure never says "nothing here needs a person".
      var bad = page.header && (page.header.tone === "critical" || page.header.status === "Degraded");
      return [el("p", { "class": "none" }, icon(bad ? "degraded" : "healthy"),
        bad ? " No findings beyond the status above: " + (page.header.reason || page.header.message || page.header.status) + "."
          : " No findings: nothing here needs a person.")];
    }
    return list.map(function (f) {
      var runbook = null;
      if (f.runbook.length) {
        var copy = el("button", { type: "button", "class": "btn", text: "Copy" });
        var code = el("code", { text: f.runbook.join("\n") });
        copy.addEventListener("click", function () { navigator.clipboard && navigator.clipboard.writeText(code.textContent); });
        runbook = el("div", { "class": "runbook", "aria-label": "Runbook" }, copy, code);
      }
      return el("article", { "class": "finding " + f.severity, "data-code": f.code },
        el("h3", null, icon(f.icon), el("span", { "class": "sev s-" + f.icon, text: f.severity }), el("span", { "class": "ftitle", text: f.title }),
          f.since ? el("span", { "class": "muted since", text: "since " + f.since }) : null),
        el("p", { text: f.explanation }),
        evidence(f),
        runbook,
        fixButton(f, page));
    });
  }

  // Evidence is Kubernetes data: every part of it goes in through textContent / attributes only.
  function evidence(f) {
    var parts = [];
    if (f.tiles.length) {
      parts.push(el("div", { "class": "tiles" }, f.tiles.map(function (t) {
        return el("div", { "class": "tile", title: t.title && t.title !== t.value ? t.title : null },
          el("div", { "class": "label", text: t.label }), el("div", { "class": "v", text: t.value }),
          t.sub ? el("div", { "class": "tsub", text: t.sub }) : null);
      })));
    }
    if (f.diff.length) {
      parts.push(el("table", { "class": "ev-diff", "data-evidence": "templateDiff" },
        el("caption", { text: "Template diff" }),
        el("thead", null, el("tr", null, el("th", { scope: "col", text: "Field" }), el("th", { scope: "col", text: "Before" }),
          el("th", { "aria-hidden": "true" }), el("th", { scope: "col", text: "After" }))),
        el("tbody", null, f.diff.map(function (r) {
          return el("tr", null, el("td", { "class": "mono", title: r.path, text: r.field }),
            el("td", { "class": "mono before", title: r.beforeFull, text: r.before }),
            el("td", { "class": "arrow", "aria-hidden": "true", text: "→" }),
            el("td", { "class": "mono after", title: r.afterFull, text: r.after }));
        }))));
    }
    if (f.syncs.length) {
      parts.push(el("div", { "class": "ev-syncs", "data-evidence": "syncs" }, el("div", { "class": "label", text: "Argo CD syncs" }),
        el("ol", null, f.syncs.map(function (s) { return el("li", { "class": "mono", title: s.title, text: s.text }); }))));
    }
    if (f.evidence.length) {
      parts.push(el("details", { "class": "ev-details", "data-details": "all" },
        el("summary", { text: "All evidence (" + f.evidence.length + " field" + (f.evidence.length === 1 ? "" : "s") + ")" }),
        el("dl", null, f.evidence.map(function (e) {
          return [el("dt", { title: e.key, text: e.label }), el("dd", { title: e.full !== e.value ? e.full : null, text: e.value })];
        })),
        f.raw ? el("details", { "class": "ev-raw", "data-details": "raw" }, el("summary", { text: "Raw JSON" }), el("pre", { text: f.raw })) : null));
    }
    return parts;
  }

  // Live updates redraw the cards; whatever evidence a reader had opened stays open.
  function drawFindings(list, page) {
    var target = document.getElementById("findings");
    var open = Array.prototype.map.call(target.querySelectorAll("details[open]"), function (d) {
      return d.closest("[data-code]").getAttribute("data-code") + "/" + d.getAttribute("data-details");
    });
    fill(target, findings(list, page));
    target.querySelectorAll("details").forEach(function (d) {
      if (open.indexOf(d.closest("[data-code]").getAttribute("data-code") + "/" + d.getAttribute("data-details")) >= 0) d.open = true;
    });
  }

  function steps(s) {
    document.getElementById("steps-sub").textContent = s.count ? "step " + Math.min(s.current, s.count) + " of " + s.count : "";
    var note = document.getElementById("steps-note");
    note.hidden = !s.note; note.textContent = s.note;
    if (!s.items.length) return [el("li", { "class": "muted", text: s.strategy === "BlueGreen" ? "Blue-green: no steps." : "No steps." })];
    return s.items.map(function (item) {
      return el("li", { "class": item.state, "aria-current": item.state === "current" ? "step" : null },
        el("span", { "class": "idx", text: String(item.index) }), el("b", { text: item.kind }), el("span", { text: item.text }),
        el("span", { "class": "state", text: item.state === "done" ? "done" : item.state === "current" ? "now" : "" }));
    });
  }

  // A ReplicaSet's role is the server's one classification (stable, canary, preview, active,
  // scaling-down, orphaned, old); this only picks its look.
  function roleBadge(rs) {
    if (!rs.role) return null;
    var words = { "scaling-down": "scaling down" };
    return el("span", { "class": "badge role " + UI.toneClass(ROLE_TONES[rs.role] || "neutral"), "data-role": rs.role, text: words[rs.role] || rs.role });
  }
  var ROLE_TONES = { stable: "healthy", active: "healthy", canary: "accent", preview: "accent", orphaned: "warning", "scaling-down": "neutral", old: "neutral" };

  function revisions(list) {
    if (!list.length) return [el("p", { "class": "none", text: "No ReplicaSets seen." })];
    return list.map(function (rev) {
      return el("div", { "class": "rev" }, el("div", null, el("span", { "class": "label", text: "rev " }), el("b", { text: String(rev.revision) })),
        rev.replicaSets.map(function (rs) {
          return el("div", { "class": "rs" + (rs.role ? " role-" + rs.role : ""), "data-role": rs.role || null, "data-rs": rs.name || null },
            icon(rs.icon), roleBadge(rs), rs.tags.filter(function (t) { return t !== rs.role; }).map(function (t) { return el("span", { "class": "badge", text: t }); }),
            el("span", { "class": "mono", text: rs.hash }), el("span", { "class": "muted", text: rs.available + " / " + rs.replicas + " available" }),
            rs.scaleDownEndsAt ? el("span", { "class": "muted", "data-countdown": rs.scaleDownEndsAt, text: "scale-down " + UI.countdown(rs.scaleDownEndsAt) })
              : rs.scaleDownDelay ? el("span", { "class": "muted", text: "delay " + rs.scaleDownDelay }) : null,
            el("span", { "class": "pods", role: "img", "aria-label": rs.pods.length + " pods" }, rs.pods.map(function (p) {
              return el("span", { "class": "pod " + p.icon, title: p.name + " · " + p.status + " · ready " + p.ready });
            })));
        }),
        rev.analysisRuns.map(function (ar) { return el("div", { "class": "rs" }, icon(ar.icon), el("span", { text: ar.name }), el("span", { "class": "muted", text: ar.status })); }));
    });
  }

  // The HPA that scales the rollout (dashboard/web/rollout.py autoscaler): text only.
  function autoscaler(a) {
    var box = document.getElementById("autoscaler");
    box.hidden = !a;
    if (!a) { fill(box); return; }
    fill(box,
      el("h3", { text: "Autoscaler " + a.name }),
      el("p", { "class": "muted", text: "scales " + a.target + (a.targetsWorkloadRef ? " (not the Rollout)" : "") }),
      el("dl", { "class": "hpa-counts" }, a.rows.map(function (r) {
        return el("div", null, el("dt", { text: r.label }), el("dd", { "data-field": "hpa-" + r.label, text: r.value }));
      })),
      a.atMax ? el("p", { "class": "note warning", text: "at its maximum" }) : null,
      el("ul", { "class": "hpa-metrics" }, a.metrics.map(function (m) { return el("li", { text: m }); })),
      a.follow ? el("p", { "class": "muted", text: "replicas now: " + a.follow }) : null);
  }

  function cssVar(name) { return getComputedStyle(document.documentElement).getPropertyValue(name).trim(); }

  function analysis(charts) {
    var target = document.getElementById("analysis");
    if (!target || !charts) return;  // a Flagger page has no analysis panel
    if (!charts.length) { fill(target, el("p", { "class": "none", text: "No analysis runs." })); return; }
    UI.clear(target);
    charts.slice(0, 4).forEach(function (c) {
      var plot = el("div", { "class": "chart", "data-chart": c.id });
      target.appendChild(el("div", { "class": "arun" }, icon(c.icon), " ", el("b", { text: c.metric }),
        el("span", { "class": "muted", text: " · " + c.run + " · " + c.status })));
      target.appendChild(plot);
      var ok = c.points.filter(function (p) { return p.value !== null; });
      var traces = [{ x: ok.map(function (p, i) { return i + 1; }), y: ok.map(function (p) { return p.value; }), mode: "lines+markers",
        name: UI.plotText(c.metric), line: { color: cssVar("--accent") },
        marker: { color: ok.map(function (p) { return p.phase === "Failed" ? cssVar("--critical") : p.phase === "Successful" ? cssVar("--healthy") : cssVar("--text-3"); }), size: 7 },
        text: ok.map(function (p) { return UI.plotText(p.at + " · " + p.phase); }), hoverinfo: "y+text" }];
      var shapes = [];
      [["success", "--healthy"], ["failure", "--critical"]].forEach(function (pair) {
        var t = c[pair[0]];
        if (!t) return;
        shapes.push({ type: "line", xref: "paper", x0: 0, x1: 1, y0: t.value, y1: t.value, line: { color: cssVar(pair[1]), dash: "dash", width: 1.5 } });
        traces.push({ x: [ok.length || 1], y: [t.value], mode: "text", text: [UI.plotText("threshold " + t.op + " " + t.value)], textposition: "top left",
          textfont: { color: cssVar(pair[1]), size: 11 }, hoverinfo: "skip", showlegend: false });
      });
      if (window.Plotly) {
        window.Plotly.react(plot, traces, { margin: { l: 40, r: 10, t: 8, b: 24 }, showlegend: false, shapes: shapes,
          paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)", font: { color: cssVar("--text-2"), size: 11 },
          xaxis: { gridcolor: cssVar("--border"), dtick: 1 }, yaxis: { gridcolor: cssVar("--border") } }, { displayModeBar: false, responsive: true });
      } else {
        plot.textContent = ok.map(function (p) { return p.value; }).join(", ");
      }
    });
  }

  function timeline(list) {
    if (!list.length) return [el("li", { "class": "none", text: "No events yet." })];
    return list.map(function (e) {
      var tone = e.tone || (e.critical ? "critical" : "");
      return el("li", { "class": (tone === "critical" ? "crit " : "") + (tone ? UI.toneClass(tone) : ""), "data-kind": e.kind, "data-filter": e.filter || "" },
        el("time", { "class": "t", datetime: e.at || null, text: e.clock }), icon(e.icon), el("span", { "class": "title", text: e.title },
          e.about ? el("span", { "class": "muted about", text: " · " + e.about }) : null));
    });
  }

  // The list scrolls inside its card; say so, and say where the rest is (the release's history).
  function timelineHint(list, page) {
    var hint = document.getElementById("timeline-more");
    var box = document.getElementById("timeline");
    if (!hint || !box) return;
    var more = page.timelineMore || 0;
    var scrolls = box.scrollHeight > box.clientHeight + 2;
    hint.hidden = !more && !scrolls;
    fill(hint, scrolls ? list.length + " events, newest first — scroll for the rest. " : "",
      more ? more + " older not shown. " : "",
      el("a", { href: document.getElementById("history-link").getAttribute("href"), text: "Full history →" }));
  }

  // --- Flagger Canary (page.kind === "canary", dashboard/web/canary.py) ---------------------------------
  var canaryMay = UI.readJSON("canary-permissions") || [];
  var canaryBase = "/api/v1/canaries/" + key.split("/").map(encodeURIComponent).join("/") + "/actions/";

  function csrf() {
    var match = document.cookie.match(/(?:^|; )csrftoken=([^;]*)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  // `ask`: the server's confirmation text (and the open findings it would go past), or "" to act at once.
  function canaryAct(action, label, ask) {
    if (ask && !window.confirm(ask)) return;
    var result = document.getElementById("canary-action-result");
    result.hidden = false; result.className = "note action-result"; result.textContent = label + "…";
    fetch(canaryBase + encodeURIComponent(action), { method: "POST", credentials: "same-origin", headers: { "X-CSRFToken": csrf() } })
      .then(function (r) { return r.json().catch(function () { return { outcome: "failed", detail: "HTTP " + r.status }; }); })
      .then(function (body) {
        result.className = "note action-result " + (body.outcome === "done" ? "ok" : "critical");
        result.textContent = label + ": " + (body.detail || body.error || body.outcome);
        // Guard rails: an approval rule covers this Canary's promote — ask for it (the request binds to the
        // revision the gate waits for; it shows, live, above the bar for everyone).
        if (String(body.detail || "").indexOf("needs approval:") === 0) requestApproval(action, label, result);
      })
      .catch(function (error) { result.className = "note action-result critical"; result.textContent = label + " failed: " + error; });
  }

  function requestApproval(action, label, result) {
    var reason = window.prompt(reasonPrompt(label), "");
    if (reason === null) return;
    fetch("/api/v1/requests", { method: "POST", credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf() },
      body: JSON.stringify({ rollout: key, action: action, reason: reason }) })
      .then(function (r) { return r.json().then(function (b) { return [r.status, b]; }); })
      .then(function (answer) {
        result.className = "note action-result " + (answer[0] === 201 ? "ok" : "critical");
        result.textContent = answer[0] === 201 ? "Requested: waiting for " + answer[1].required + " approval(s) from " + answer[1].approvers.join(", ") + "."
          : label + ": " + (answer[1].error || "the request was refused");
      });
  }
  function reasonPrompt(label) { return label + " needs approval. Why? (the approvers read this)"; }

  // A button of the Canary's bar; `reason` (why it is disabled) is shown as its tooltip and description.
  function canaryButton(action, label, destructive, reason, ask) {
    var id = "why-canary-" + action;
    return [el("button", { type: "button", "class": "btn" + (destructive ? " danger" : "") + (reason ? " is-disabled" : ""),
      "data-canary-action": action, "aria-disabled": reason ? "true" : null, title: reason || null, "aria-describedby": reason ? id : null,
      onclick: function () { if (!reason) canaryAct(action, label, ask); } }, label),
      reason ? el("span", { "class": "sr-only", id: id, text: reason }) : null];
  }

  // Actions outside the server's bar document (suspend / resume): shown to all, disabled with the reason
  // for a user who may not run them.
  function actButton(action, label, destructive) {
    var reason = canaryMay.indexOf(action) < 0 ? "Your role may not " + label.toLowerCase() + " this canary." : "";
    return canaryButton(action, label, destructive, reason,
      destructive ? label + " " + key + "? Flagger acts on its next analysis tick." : "");
  }

  // The server's bar (page.actions): whether each gate answer applies now and why not, this user's right,
  // and what to confirm (naming the open critical findings a promote would go past).
  function barButton(b) {
    var reason = b.allowed === false ? (b.deniedReason || "Your role may not " + b.label.toLowerCase() + " this canary.")
      : canaryMay.indexOf(b.name) < 0 && b.allowed === undefined ? "Your role may not " + b.label.toLowerCase() + " this canary."
      : !b.applies ? (b.reason || "Does not apply now.") : "";
    var ask = b.confirm || "";
    if (b.warnings && b.warnings.length && !ask) ask = b.label + "? Still open: " + b.warnings.map(function (w) { return w.title; }).join("; ");
    return canaryButton(b.name, b.label, b.destructive, reason, ask);
  }

  function canaryBadges(h) {
    var parts = [
      el("span", { "class": "pair", "data-badge": "controller", title: "The progressive-delivery controller" },
        el("span", { "class": "k", text: "Controller" }), el("span", null, UI.controllerIcon("flagger"), el("span", { text: "Flagger · Canary" }))),
      el("span", { "class": "pair", "data-badge": "flagger-phase", title: "Flagger's own phase word (status.phase)" },
        el("span", { "class": "k", text: "Flagger phase" }), el("span", { "data-field": "phase", text: h.phase }),
        h.phaseWords ? el("span", { "class": "muted", text: h.phaseWords }) : null),
      el("span", { "class": "pair" + (h.tone ? " " + UI.toneClass(h.tone) : ""), "data-badge": "phase", title: "The same state in this dashboard's status words" },
        el("span", { "class": "k", text: "Status here" }), el("span", null, icon(h.icon), el("span", { "data-field": "status", text: h.status }))),
      h.argocd && h.argocd.health && (h.argocd.managed || h.argocd.source === "application") ?
        el("span", { "class": "pair", "data-badge": "argocd", title: "Health as the managing Argo CD Application reports it" },
          el("span", { "class": "k", text: "Argo CD" }),
          el("span", null, icon(h.argocd.observed ? h.argocd.icon : "unknown"), el("span", { text: h.argocd.health })),
          h.argocd.sync ? el("span", { text: h.argocd.sync }) : null) : null,
    ];
    if (h.message) parts.push(el("span", { "class": "muted", "data-field": "message", text: "“" + h.message + "”" }));
    if (h.suspended) parts.push(el("span", { "class": "badge tone-warning" }, icon("paused"), "suspended"));
    if (h.findings.critical) parts.push(el("span", { "class": "badge tone-critical" }, icon("critical"), h.findings.critical + " critical"));
    if (h.findings.warning) parts.push(el("span", { "class": "badge tone-warning" }, icon("warning"), h.findings.warning + " warning" + (h.findings.warning > 1 ? "s" : "")));
    return parts;
  }

  function canaryMeta(h, notes) {
    function item(label, value, field) { return el("span", null, label + " ", el("b", { "data-field": field || null, text: value })); }
    var out = [item("Strategy", h.flaggerStrategy + (h.provider ? " · " + h.provider : ""))];
    if (h.progress) out.push(item("Progress", h.progress, "step"));
    out.push(item("Weight", pct(h.setWeight) + " in status", "setWeight"));
    out.push(item("Routed", pct(h.actualWeight) + (h.weightSource ? " (" + h.weightSource + ")" : ""), "actualWeight"));
    // Where the server found the status field misleading, show what is true (and what the field says).
    var corrected = notes.filter(function (n) { return n.field === "status.failedChecks"; })[0];
    out.push(item("Failed checks", h.failedChecksText || (corrected ? corrected.truth + " / " + h.threshold + " (status says " + corrected.says + ")"
      : h.failedChecks + " / " + h.threshold), "failedChecks"));
    if (h.canaryImage) out.push(item("Image", h.canaryImage));
    if (h.stableImage) out.push(item("Primary", h.stableImage));
    if (h.phaseSince) out.push(item("Phase since", h.phaseSince));
    return out;
  }

  function canaryNotes(list) {
    if (!list.length) return [el("p", { "class": "none" }, icon("healthy"), " Flagger's status tells the truth here: nothing to correct.")];
    return list.map(function (n) {
      return el("article", { "class": "cnote", "data-note": n.code },
        el("div", { "class": "cnote-field mono", text: n.field }),
        el("div", { "class": "tiles" },
          el("div", { "class": "tile says" }, el("div", { "class": "label", text: "What the status says" }), el("div", { "class": "v", text: n.says })),
          el("div", { "class": "tile truth" }, el("div", { "class": "label", text: "What is true" }), el("div", { "class": "v", text: n.truth })),
          el("div", { "class": "tile" }, el("div", { "class": "label", text: "Source" }), el("div", { "class": "v", text: n.source }))),
        el("p", { "class": "muted", text: n.text }));
    });
  }

  function canaryGates(list) {
    if (!list.length) return [el("li", { "class": "none", text: "No gate webhooks: Flagger decides alone." })];
    return list.map(function (g) {
      return el("li", { "class": "gate g-" + g.state, "data-gate": g.name },
        icon(g.icon),
        el("div", null,
          el("div", null, el("b", { text: g.name }), el("span", { "class": "muted", text: " · " + g.type + " · " }), el("span", { "class": "gstate", text: g.state }),
            g.since ? el("span", { "class": "muted", text: " since " + g.since }) : null),
          el("div", { "class": "muted", text: g.state === "waiting" ? "waiting for " + g.waitingFor : g.waitingFor })));
    });
  }

  function canaryChecks(list) {
    document.getElementById("checks-sub").textContent = list.length + " check" + (list.length === 1 ? "" : "s");
    if (!list.length) return [el("tr", null, el("td", { colspan: "5", "class": "muted", text: "No checks configured." }))];
    return list.map(function (c) {
      return el("tr", { "data-check": c.name },
        el("td", null, el("b", { text: c.name }), el("div", { "class": "muted", text: c.kind + " · " + c.type })),
        el("td", { "class": "mono", text: c.threshold || "—" }),
        el("td", { "class": "mono", text: c.lastValue === "" ? "—" : String(c.lastValue) }),
        el("td", null, icon(c.icon), " ", c.lastResult, c.at ? el("div", { "class": "muted", text: c.at }) : null),
        el("td", { "class": "muted", text: c.source || "—" }));
    });
  }

  function canaryEvents(list) {
    if (!list.length) return [el("li", { "class": "none", text: "No events about this Canary." })];
    return list.map(function (e) {
      return el("li", { "class": e.type === "Warning" ? "crit" : "", "data-kind": e.kind || "event" },
        el("span", { "class": "t", text: e.at }), icon(e.icon),
        el("span", { "class": "title", text: e.message + (e.count > 1 ? " (×" + e.count + ")" : "") }));
    });
  }

  function renderCanary(page) {
    var h = page.header;
    fill(document.getElementById("badges"), canaryBadges(h));
    fill(document.getElementById("meta"), canaryMeta(h, page.notes || []));
    document.getElementById("flow-sub").textContent = h.cluster + " / " + h.namespace + (h.progress ? " · " + h.progress : "");
    Flow.draw(document.getElementById("flow"), page.flow);
    fill(document.getElementById("findings-count"),
      h.findings.critical ? el("span", { "class": "badge tone-critical" }, icon("critical"), h.findings.critical + " critical") : null,
      h.findings.warning ? el("span", { "class": "badge tone-warning" }, icon("warning"), h.findings.warning + " warning") : null);
    drawFindings(page.findings, page);
    fill(document.getElementById("canary-notes"), canaryNotes(page.notes));
    fill(document.getElementById("canary-gates"), canaryGates(page.gates));
    // The action bar at the top: the server's gate answers (promote, hold, roll back), then suspend/resume.
    var bar = ((page.actions && page.actions.buttons) || []).map(barButton);
    fill(document.getElementById("canary-actions"), bar.filter(function (x, i) { return !page.actions.buttons[i].destructive; }),
      h.suspended ? actButton("resume", "Resume", false) : actButton("suspend", "Suspend", true),
      bar.filter(function (x, i) { return page.actions.buttons[i].destructive; }));
    fill(document.getElementById("canary-checks"), canaryChecks(page.checks));
    fill(document.getElementById("canary-events"), canaryEvents(page.events));
    fill(document.getElementById("timeline"), timeline(page.timeline));
    timelineHint(page.timeline, page);
    document.body.setAttribute("data-stream-id", page.updatedAt || "");
    document.dispatchEvent(new CustomEvent("rolloutpage", { detail: page }));
  }

  var shownAs = UI.readJSON("rollout-controller") || "argo-rollouts";

  function render(page) {
    current = page;
    var missing = document.getElementById("not-found");
    if (missing) missing.hidden = !!page;
    if (!page) return;
    // The page's panels were laid out for one controller; an object of the other kind needs the other page.
    if ((page.kind === "canary") !== (shownAs === "flagger")) { location.reload(); return; }
    if (page.kind === "canary") { renderCanary(page); return; }
    var h = page.header;
    fill(document.getElementById("badges"), badges(h));
    fill(document.getElementById("meta"), meta(h));
    document.getElementById("flow-sub").textContent = h.cluster + " / " + h.namespace + (h.step ? " · step " + h.step : "");
    Flow.draw(document.getElementById("flow"), page.flow);
    fill(document.getElementById("findings-count"),
      h.findings.critical ? el("span", { "class": "badge tone-critical" }, icon("critical"), h.findings.critical + " critical") : null,
      h.findings.warning ? el("span", { "class": "badge tone-warning" }, icon("warning"), h.findings.warning + " warning") : null);
    drawFindings(page.findings, page);
    fill(document.getElementById("steps"), steps(page.steps));
    fill(document.getElementById("revisions"), revisions(page.revisions));
    autoscaler(page.autoscaler);
    analysis(page.analysis);
    fill(document.getElementById("timeline"), timeline(page.timeline));
    timelineHint(page.timeline, page);
    document.body.setAttribute("data-stream-id", page.updatedAt || "");
    document.dispatchEvent(new CustomEvent("rolloutpage", { detail: page }));
  }

  render(initial.page);
  window.addEventListener("load", function () { if (current) analysis(current.analysis); });  // plotly loads deferred
  document.addEventListener("themechange", function () { if (current) analysis(current.analysis); });
  setInterval(function () {  // scale-down delays count down between updates
    document.querySelectorAll("[data-countdown]").forEach(function (node) {
      node.textContent = "scale-down " + UI.countdown(node.getAttribute("data-countdown"));
    });
  }, 1000);
  var path = "/ws/rollouts/" + key.split("/").map(encodeURIComponent).join("/") + "/";
  var live = Live.connect(path, {
    snapshot: function (m) { render(m.page); },
    update: function (m) { render(m.page); },
  });
  live.start(initial.streamId);
})();
