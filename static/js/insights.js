// Insights page: draws the server's figures (embedded as JSON) with plotly; trend lines come from the
// server too. Names and codes go into plotly as text (UI.plotText), into tables with textContent.
(function () {
  "use strict";
  var el = UI.el, plain = UI.plotText;
  var doc = UI.readJSON("insights-doc");
  if (!doc) return;

  function css(name, fallback) {
    var v = getComputedStyle(document.documentElement).getPropertyValue(name);
    return (v && v.trim()) || fallback;
  }
  function duration(s) {
    if (s === null || s === undefined) return "—";
    if (s < 90) return Math.round(s) + " s";
    if (s < 5400) return Math.round(s / 60) + " min";
    if (s < 172800) return (s / 3600).toFixed(1) + " h";
    return (s / 86400).toFixed(1) + " d";
  }
  function pct(v) { return v === null || v === undefined ? "—" : (v * 100).toFixed(1) + " %"; }

  var r = doc.releases.summary, lead = doc.leadTime.summary, restore = doc.restore.summary;
  var tiles = [
    ["Deployments", r.deployments, (r.perDay === null ? "—" : r.perDay) + " a day"],
    ["Change failure rate", pct(r.changeFailureRate), r.failed + " of " + r.finished + " finished (" + r.aborted + " aborted, " + r.rolledBack + " rolled back)"],
    ["Lead time (median)", duration(lead.medianSeconds), lead.releases + " with a known merge · p90 " + duration(lead.p90Seconds)],
    ["Time to restore (median)", duration(restore.medianSeconds), restore.incidents + " incidents · " + restore.open + " open"],
  ];
  var box = document.getElementById("insights-tiles");
  tiles.forEach(function (t) {
    box.appendChild(el("div", { "class": "tile", "data-figure": t[0] }, el("div", { "class": "k muted" }, t[0]),
      el("div", { "class": "v" }, String(t[1])), el("div", { "class": "muted tsub" }, t[2])));
  });

  function layout(title, yTitle, percent) {
    return {
      title: { text: plain(title), font: { size: 13 } }, height: 260, margin: { l: 56, r: 10, t: 34, b: 40 },
      paper_bgcolor: css("--card", "#fff"), plot_bgcolor: css("--card", "#fff"), showlegend: true,
      legend: { orientation: "h", y: -0.25 },
      font: { color: css("--text", "#101828"), size: 11, family: css("--sans", "sans-serif") },
      xaxis: { type: "date", gridcolor: css("--border", "#E4E7EC") },
      yaxis: { title: { text: yTitle }, gridcolor: css("--border", "#E4E7EC"), rangemode: "tozero",
        tickformat: percent ? ".0%" : "" },
    };
  }
  var charts = document.getElementById("insights-charts");
  function chart(id, title, yTitle, series, field, trend, kind, scale, percent) {
    var card = el("div", { "class": "card insights-chart", "data-chart": id });
    var node = el("div", { "class": "insights-plot" });
    card.appendChild(node);
    charts.appendChild(card);
    var x = series.map(function (p) { return p.bucket; });
    var y = series.map(function (p) { return p[field] === null ? null : p[field] * (scale || 1); });
    if (!series.length) {
      node.appendChild(el("p", { "class": "empty" }, title + ": nothing recorded in this period"));
      return;
    }
    var traces = [{ x: x, y: y, type: kind, name: plain(title), marker: { color: css("--accent", "#3E63DD") },
      line: { color: css("--accent", "#3E63DD"), width: 2 }, connectgaps: true }];
    if (trend) {
      traces.push({ x: x, y: trend.map(function (v) { return v === null ? null : v * (scale || 1); }), mode: "lines",
        name: "trend", line: { color: css("--text-3", "#667085"), dash: "dash", width: 1.5 } });
    }
    window.Plotly.newPlot(node, traces, layout(title, yTitle, percent), { displayModeBar: false, responsive: true });
  }
  function draw() {
    var rel = doc.releases, lt = doc.leadTime, rs = doc.restore;
    chart("deployments", "Deployments per " + doc.filters.bucket, "releases", rel.series, "deployments", rel.trend.deployments, "bar");
    chart("failure-rate", "Change failure rate", "", rel.series, "changeFailureRate", rel.trend.changeFailureRate, "scatter", 1, true);
    chart("lead-time", "Lead time, median (hours)", "hours", lt.series, "medianSeconds", lt.trend.medianSeconds, "scatter", 1 / 3600);
    chart("restore", "Time to restore, median (hours)", "hours", rs.series, "medianSeconds", rs.trend.medianSeconds, "scatter", 1 / 3600);
  }

  function table(id, columns, rows, empty) {
    var t = document.getElementById(id);
    if (!t) return;
    t.appendChild(el("thead", {}, el("tr", {}, columns.map(function (c) { return el("th", {}, c[0]); }))));
    var body = el("tbody");
    if (!rows.length) body.appendChild(el("tr", {}, el("td", { colspan: columns.length, "class": "muted" }, empty)));
    rows.forEach(function (row) {
      body.appendChild(el("tr", {}, columns.map(function (c) { return el("td", {}, c[1](row)); })));
    });
    t.appendChild(body);
  }
  table("table-steps", [["Step", function (s) { return String(s.step); }], ["Times", function (s) { return String(s.count); }],
    ["Median", function (s) { return duration(s.medianSeconds); }], ["p90", function (s) { return duration(s.p90Seconds); }]],
    doc.steps, "No steps recorded in this period");
  table("table-pauses", [["Reason", function (p) { return p.reason; }], ["Pauses", function (p) { return String(p.count); }],
    ["Still paused", function (p) { return String(p.open); }], ["Median", function (p) { return duration(p.medianSeconds); }],
    ["p90", function (p) { return duration(p.p90Seconds); }]], doc.pauses, "No pauses recorded in this period");
  table("table-findings", [["Finding", function (f) { return f.code; }], ["Severity", function (f) { return f.severity || ""; }],
    ["Raised", function (f) { return String(f.raised); }], ["Still open", function (f) { return String(f.open); }],
    ["Open for (median)", function (f) { return duration(f.medianOpenSeconds); }], ["p90", function (f) { return duration(f.p90OpenSeconds); }]],
    doc.findings, "No findings raised in this period");
  table("table-actors", [["Who", function (a) { return a.actor; }], ["Action", function (a) { return a.action; }],
    ["Times", function (a) { return String(a.count); }]], doc.actors, "Nobody acted through the dashboard in this period");

  if (window.Plotly) draw(); else window.addEventListener("load", draw);
})();
