/* The rollout page's metrics panel: polls …/metrics and draws plotly charts; the dry-run button calls
   …/analysis-dryrun. Prometheus being down is shown as a state of the panel; nothing else on the page
   depends on it. Uses the plotly.js the page already loads (served from the installed plotly package). */
(function () {
  "use strict";
  var panel = document.getElementById("metrics-panel");
  if (!panel) return;
  var POLL_MS = 5000;
  var PHASE_COLOURS = { Successful: "#12B76A", Failed: "#D92D20", Error: "#DC6803", Inconclusive: "#3E63DD" };
  var VERSION_COLOURS = { stable: "#3E63DD", canary: "#DC6803" };
  var drawn = {};

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
  function layout(title, yTitle) {
    return {
      title: { text: title, font: { size: 13 } }, height: 260, margin: { l: 50, r: 10, t: 34, b: 36 },
      paper_bgcolor: css("--card", "#fff"), plot_bgcolor: css("--card", "#fff"),
      font: { color: css("--text", "#101828"), size: 11 }, showlegend: true,
      legend: { orientation: "h", y: -0.2 }, xaxis: { type: "date", gridcolor: css("--border", "#E4E7EC") },
      yaxis: { title: { text: yTitle || "" }, gridcolor: css("--border", "#E4E7EC"), rangemode: "tozero" },
      shapes: [], annotations: []
    };
  }
  function plot(container, id, traces, lay) {
    var node = drawn[id];
    if (!node) {
      node = el("div", { "class": "metrics-chart", "data-chart": id });
      container.appendChild(node);
      drawn[id] = node;
    }
    window.Plotly.react(node, traces, lay, { displayModeBar: false, responsive: true });
  }

  function drawAnalysis(spec, container) {
    var traces = (spec.series || []).map(function (s, i) {
      return { x: dates(s.t), y: s.v, mode: "lines", name: i ? "series " + (i + 1) : "query", line: { width: 2 } };
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
        text: ms.map(function (m) { return phase + " " + m.text + (m.message ? " — " + m.message : ""); }),
        hoverinfo: "text+x", mode: "markers", name: "measurement: " + phase,
        marker: { size: 10, color: PHASE_COLOURS[phase] || "#667085", symbol: phase === "Successful" ? "circle" : "x" }
      });
    });
    var lay = layout(spec.metric + " · " + spec.run + " (" + (spec.phase || spec.runStatus || "") + ")");
    (spec.thresholds || []).forEach(function (th) {
      lay.shapes.push({ type: "line", xref: "paper", x0: 0, x1: 1, y0: th.value, y1: th.value,
        line: { color: th.kind === "failure" ? "#D92D20" : "#12B76A", dash: "dash", width: 1.5 } });
      lay.annotations.push({ xref: "paper", x: 1, xanchor: "right", y: th.value, yanchor: "bottom",
        text: th.kind + ": result " + th.op + " " + th.value, showarrow: false, font: { size: 10 } });
    });
    if (spec.window && spec.window.start) {
      var end = spec.window.end || Date.now() / 1000;
      lay.shapes.push({ type: "rect", xref: "x", yref: "paper", x0: new Date(spec.window.start * 1000),
        x1: new Date(end * 1000), y0: 0, y1: 1, fillcolor: "rgba(62,99,221,0.08)", line: { width: 0 }, layer: "below" });
      lay.annotations.push({ xref: "x", yref: "paper", x: new Date(spec.window.start * 1000), y: 1, xanchor: "left",
        yanchor: "top", text: spec.window.label, showarrow: false, font: { size: 10 } });
    }
    if (spec.error) lay.title.text += " — " + spec.error;
    plot(container, "analysis:" + spec.id, traces, lay);
  }

  function drawPanel(item, container) {
    var traces = (item.series || []).map(function (s) {
      var version = s.labels.version || JSON.stringify(s.labels);
      return { x: dates(s.t), y: s.v, mode: "lines", name: version,
        line: { width: 2, color: VERSION_COLOURS[version] } };
    });
    var lay = layout(item.title + " · canary vs stable" + (item.error ? " — " + item.error : ""));
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
    } else {
      state.textContent = prom.state === "unreachable" ? "Prometheus unreachable" : "No Prometheus";
      banner.hidden = false;
      banner.className = "note critical";
      banner.textContent = prom.message + (prom.state === "unreachable"
        ? " — live metrics are unavailable, and analyses querying it will Error: automated rollback cannot protect this release until it is back."
        : "");
    }
    if (!window.Plotly) return;
    var analyses = document.getElementById("metrics-analyses");
    (doc.analyses || []).forEach(function (spec) { if (prom.state === "ok") drawAnalysis(spec, analyses); });
    var standard = document.getElementById("metrics-standard");
    (doc.panel || []).forEach(function (item) { drawPanel(item, standard); });
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
