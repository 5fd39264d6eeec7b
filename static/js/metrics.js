/* The rollout page's metrics panel: polls …/metrics and draws plotly charts; the dry-run button calls
   …/analysis-dryrun. Prometheus being down is shown as a state of the panel; nothing else on the page
   depends on it. Uses the plotly.js the page already loads (served from the installed plotly package). */
(function () {
  "use strict";
  var panel = document.getElementById("metrics-panel");
  if (!panel) return;
  var POLL_MS = 5000;
  var drawn = {};
  var added = false;

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }
  function dates(ts) { return ts.map(function (t) { return new Date(t * 1000); }); }
  function css(name, fallback) {
    var v = getComputedStyle(document.documentElement).getPropertyValue(name);
    return (v && v.trim()) || fallback;
  }
  // Verdict colours follow the design tokens (and so the dark theme).
  function phaseColour(phase) {
    return { Successful: css("--healthy", "#12B76A"), Failed: css("--critical", "#D92D20"),
      Error: css("--warning", "#DC6803"), Inconclusive: css("--accent", "#3E63DD") }[phase] || css("--text-3", "#667085");
  }
  var plain = window.UI.plotText;  // names, messages and errors go into plotly as text, never markup
  function layout(title, yTitle) {
    return {
      title: { text: plain(title), font: { size: 13 } }, height: 260, margin: { l: 50, r: 10, t: 34, b: 36 },
      paper_bgcolor: css("--card", "#fff"), plot_bgcolor: css("--card", "#fff"),
      font: { color: css("--text", "#101828"), size: 11, family: css("--sans", "sans-serif") }, showlegend: true,
      legend: { orientation: "h", y: -0.2 }, xaxis: { type: "date", gridcolor: css("--border", "#E4E7EC") },
      yaxis: { title: { text: yTitle || "" }, gridcolor: css("--border", "#E4E7EC"), rangemode: "tozero" },
      shapes: [], annotations: []
    };
  }
  function slot(container, id) {
    var node = drawn[id];
    if (!node) {
      node = el("div", { "class": "metrics-chart", "data-chart": id });
      node.style.minWidth = "0";  // a grid item may shrink below the width plotly first drew it at
      container.appendChild(node);
      drawn[id] = node;
      added = true;
    }
    return node;
  }
  function plot(container, id, traces, lay) {
    var node = slot(container, id);
    if (node.getAttribute("data-empty")) { node.removeAttribute("data-empty"); node.textContent = ""; }
    window.Plotly.react(node, traces, lay, { displayModeBar: false, responsive: true });
  }
  // No data yet (or a failed query): a sentence in the chart's place, never empty axes dated 2000.
  function placeholder(container, id, title, text, tone) {
    var node = slot(container, id);
    if (node.getAttribute("data-empty") === tone + text) return;
    if (node.classList.contains("js-plotly-plot")) window.Plotly.purge(node);
    node.textContent = "";
    node.setAttribute("data-empty", tone + text);
    node.className = "metrics-chart metrics-empty " + tone;
    node.appendChild(el("div", { "class": "metrics-empty-title" }, title));
    node.appendChild(el("div", { "class": "metrics-empty-text" }, text));
  }
  function empty(series) { return !(series || []).some(function (s) { return s.t.length; }); }

  // Why a chart has no line, written across it (a title would overflow): the query's error, or no data.
  function explain(lay, error, series) {
    if (!error && !empty(series)) return;
    var text = error || "No data for this query yet";
    lay.annotations.push({ xref: "paper", yref: "paper", x: 0.5, y: 0.5, showarrow: false,
      text: plain(text).replace(/(.{1,60})(\s|$)/g, "$1<br>"), font: { size: 11, color: css(error ? "--critical" : "--text-3", "#667085") } });
  }

  function drawAnalysis(spec, container) {
    var title = spec.metric + " · " + spec.run + " (" + (spec.phase || spec.runStatus || "") + ")";
    var measured = (spec.measurements || []).some(function (m) { return m.t !== null; });
    if (spec.error && empty(spec.series) && !measured) {
      placeholder(container, "analysis:" + spec.id, title, "Query failed: " + spec.error, "critical"); return;
    }
    if (empty(spec.series) && !measured) {
      placeholder(container, "analysis:" + spec.id, title, "Waiting for the first measurement.", "muted"); return;
    }
    var traces = (spec.series || []).map(function (s, i) {
      return { x: dates(s.t), y: s.v, mode: "lines", name: i ? "series " + (i + 1) : "query",
        line: { width: 2, color: css("--accent", "#3E63DD") } };
    });
    var byPhase = {};
    (spec.measurements || []).forEach(function (m) {
      if (m.t === null) return;
      (byPhase[m.phase] = byPhase[m.phase] || []).push(m);
    });
    Object.keys(byPhase).forEach(function (phase) {
      var ms = byPhase[phase];
      traces.push({
        x: ms.map(function (m) { return new Date(m.t * 1000); }),
        y: ms.map(function (m) { return m.value === null ? 0 : m.value; }),
        text: ms.map(function (m) { return plain(phase + " " + m.text + (m.message ? " — " + m.message : "")); }),
        hoverinfo: "text+x", mode: "markers", name: plain("measurement: " + phase),
        marker: { size: 10, color: phaseColour(phase), symbol: phase === "Successful" ? "circle" : "x",
          line: { width: 1, color: css("--card", "#fff") } }
      });
    });
    var lay = layout(title);
    // The threshold is where a canary stops passing: drawn in the critical colour, as in the design.
    (spec.thresholds || []).forEach(function (th) {
      var critical = css("--critical", "#D92D20");
      lay.shapes.push({ type: "line", xref: "paper", x0: 0, x1: 1, y0: th.value, y1: th.value,
        line: { color: critical, dash: th.kind === "failure" ? "dot" : "dash", width: 1.5 } });
      lay.annotations.push({ xref: "paper", x: 1, xanchor: "right", y: th.value, yanchor: "bottom",
        text: (th.kind === "failure" ? "fails if " : "threshold ") + th.op + " " + th.value,
        showarrow: false, font: { size: 10, color: critical } });
    });
    if (spec.window && spec.window.start) {
      var end = spec.window.end || Date.now() / 1000;
      lay.shapes.push({ type: "rect", xref: "x", yref: "paper", x0: new Date(spec.window.start * 1000),
        x1: new Date(end * 1000), y0: 0, y1: 1, fillcolor: css("--accent", "#3E63DD"), opacity: 0.08,
        line: { width: 0 }, layer: "below" });
      lay.annotations.push({ xref: "x", yref: "paper", x: new Date(spec.window.start * 1000), y: 1, xanchor: "left",
        yanchor: "top", text: plain(spec.window.label), showarrow: false, font: { size: 10 } });
    }
    explain(lay, spec.error, spec.series);
    plot(container, "analysis:" + spec.id, traces, lay);
  }

  function drawPanel(item, container) {
    var title = item.title + " · canary vs stable";
    if (empty(item.series)) {
      if (item.error) placeholder(container, "panel:" + item.name, title, "Query failed: " + item.error, "critical");
      else placeholder(container, "panel:" + item.name, title, "Waiting for the first sample: no traffic has been measured for this rollout yet.", "muted");
      return;
    }
    // Stable wide and pale underneath, canary thin on top: a healthy canary tracks stable exactly, and
    // both lines must stay visible when they coincide.
    var order = { stable: 0, canary: 1 };
    var series = (item.series || []).slice().sort(function (a, b) {
      return (order[a.labels.version] === undefined ? 2 : order[a.labels.version]) -
        (order[b.labels.version] === undefined ? 2 : order[b.labels.version]);
    });
    var traces = series.map(function (s) {
      var version = s.labels.version || JSON.stringify(s.labels);
      var stable = version === "stable";
      return { x: dates(s.t), y: s.v, mode: "lines", name: plain(version), opacity: stable ? 0.45 : 1,
        line: { width: stable ? 5 : 2, color: stable ? css("--accent", "#3E63DD") : css("--warning", "#DC6803") } };
    });
    var lay = layout(title);
    explain(lay, item.error, item.series);
    plot(container, "panel:" + item.name, traces, lay);
  }

  function render(doc) {
    var state = document.getElementById("metrics-state");
    var banner = document.getElementById("metrics-unavailable");
    var prom = doc.prometheus || {};
    panel.setAttribute("data-state", prom.state || "unknown");
    if (prom.state === "ok") {
      state.textContent = "Prometheus " + (prom.url || "") + " · " + (doc.analyses || []).length + " analysis chart(s)";
      banner.hidden = true;
    } else if (prom.state === "unreachable" || /error/i.test(prom.message || "")) {
      // A real failure: red, and what it costs.
      state.textContent = prom.state === "unreachable" ? "Prometheus unreachable" : "Metrics misconfigured";
      banner.hidden = false;
      banner.className = "note critical";
      banner.textContent = prom.message + (prom.state === "unreachable"
        ? " — live metrics are unavailable, and analyses querying it will Error: automated rollback cannot protect this release until it is back."
        : "");
    } else {
      // Nothing configured is a setup choice, not an incident: say so quietly.
      state.textContent = "No Prometheus";
      banner.hidden = false;
      banner.className = "note info";
      var message = prom.message || "no Prometheus is configured for this cluster (set PROMETHEUS_URLS)";
      banner.textContent = message.charAt(0).toUpperCase() + message.slice(1) +
        ". Live charts appear here once one is set; the cluster's analyses run regardless.";
    }
    var analyses = document.getElementById("metrics-analyses");
    var standard = document.getElementById("metrics-standard");
    // Without Prometheus the charts would be empty axes (or stale lines): the banner says it all.
    analyses.style.display = standard.style.display = prom.state === "ok" ? "grid" : "none";
    if (!window.Plotly || prom.state !== "ok") return;
    (doc.analyses || []).forEach(function (spec) { drawAnalysis(spec, analyses); });
    (doc.panel || []).forEach(function (item) { drawPanel(item, standard); });
    if (added) {  // a new chart changes the grid: let the ones already drawn take their final width
      added = false;
      Object.keys(drawn).forEach(function (id) {
        if (!drawn[id].getAttribute("data-empty")) window.Plotly.Plots.resize(drawn[id]);
      });
    }
  }

  function poll() {
    fetch(panel.getAttribute("data-api"), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.json(); })
      .then(render)
      .catch(function () {
        document.getElementById("metrics-state").textContent = "Metrics temporarily unavailable";
      })
      .finally(function () { setTimeout(poll, POLL_MS); });
  }

  function renderDryRun(doc) {
    var box = document.getElementById("metrics-dryrun-result");
    box.hidden = false;
    box.textContent = "";
    box.className = "note";
    if (doc.error) { box.textContent = "Dry run: " + doc.error; return; }
    box.appendChild(el("strong", {}, "Dry run against stable " + (doc.stableHash || "") + ": verdict " + doc.verdict));
    var table = el("table", { "class": "dryrun" });
    (doc.metrics || []).forEach(function (m) {
      var row = el("tr", { "data-phase": m.phase });
      row.appendChild(el("td", {}, m.name));
      row.appendChild(el("td", {}, m.phase));
      row.appendChild(el("td", {}, m.value || "–"));
      row.appendChild(el("td", {}, [m.message].concat(m.problems || []).filter(Boolean).join(" · ")));
      table.appendChild(row);
    });
    box.appendChild(table);
  }

  document.getElementById("metrics-dryrun").addEventListener("click", function () {
    fetch(panel.getAttribute("data-dryrun"), { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) { return r.json(); })
      .then(renderDryRun)
      .catch(function (e) { renderDryRun({ error: String(e) }); });
  });

  var waited = 0;
  (function wait() {  // plotly.js is loaded with defer; draw states even if it never arrives
    if (window.Plotly || waited > 50) { poll(); return; }
    waited += 1; setTimeout(wait, 100);
  })();
})();
