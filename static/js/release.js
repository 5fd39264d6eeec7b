// Release timeline page: the weight/step chart with event markers, the event list, and a scrubber that
// redraws the flow diagram as it was at each recorded moment (the documents come from
// dashboard/web/history.py; the diagram is drawn by flow.js, as on the live page).
(function () {
  "use strict";
  var el = UI.el, icon = UI.icon;
  var doc = UI.readJSON("initial");
  var scrub = document.getElementById("scrub");
  var output = document.getElementById("scrub-at");
  var label = document.getElementById("scrub-label");
  var list = document.getElementById("release-events");
  var chartNode = document.getElementById("release-chart");
  var frame = -1;

  // The post-mortem links carry the reader's time zone (the server formats every time in UTC and in it).
  var zone = (window.Intl && Intl.DateTimeFormat().resolvedOptions().timeZone) || "";
  ["postmortem-md", "postmortem-json"].forEach(function (id) {
    var link = document.getElementById(id);
    if (link && zone) link.href = link.getAttribute("href") + "?tz=" + encodeURIComponent(zone);
  });

  function cssVar(name) { return getComputedStyle(document.documentElement).getPropertyValue(name).trim(); }

  function show(index) {
    index = Math.max(0, Math.min(doc.frames.length - 1, index));
    if (index === frame) return;
    frame = index;
    var f = doc.frames[index];
    scrub.value = String(index);
    output.textContent = f.when;
    scrub.setAttribute("aria-valuetext", f.when + " · " + f.label);
    label.textContent = "moment " + (index + 1) + " of " + doc.frames.length + " · " + f.label;
    Flow.draw(document.getElementById("flow"), doc.flows[f.flow]);
    document.body.setAttribute("data-frame", String(index));
    list.querySelectorAll("li[data-frame]").forEach(function (li) {
      var on = li.getAttribute("data-frame") === String(index);
      li.classList.toggle("current", on);
      if (on) li.setAttribute("aria-current", "true"); else li.removeAttribute("aria-current");
    });
    if (window.Plotly && chartNode.data) {
      window.Plotly.relayout(chartNode, { "shapes[0].x0": f.at, "shapes[0].x1": f.at });
    }
  }

  function events() {
    if (!doc.events.length) return [el("li", { "class": "none", text: "No events recorded for this release." })];
    return doc.events.map(function (e) {
      var li = el("li", { "class": (e.critical ? "crit" : ""), "data-kind": e.kind, "data-filter": e.filter || "", "data-frame": String(e.frame), tabindex: "0" },
        el("span", { "class": "t", text: e.when.slice(11) }), icon(e.icon),
        el("span", { "class": "title", text: e.title }, e.about ? el("span", { "class": "muted about", text: " · " + e.about }) : null,
          e.podHash && e.podHash !== doc.release.podHash ? el("span", { "class": "muted mono", text: " · " + e.podHash }) : null));
      function pick() { show(e.frame); }
      li.addEventListener("click", pick);
      li.addEventListener("keydown", function (event) { if (event.key === "Enter" || event.key === " ") { event.preventDefault(); pick(); } });
      return li;
    });
  }

  var SYMBOLS = { "pause": "line-ew-open", "hash change": "diamond", "analysis": "circle", "abort": "x", "action": "triangle-down", "promote": "triangle-up", "promoted": "star" };
  var TONES = { paused: "--accent", warning: "--warning", critical: "--critical", healthy: "--healthy", info: "--text-3", accent: "--accent" };

  function chart() {
    if (!window.Plotly) { chartNode.textContent = "The chart needs plotly.js, which did not load."; return; }
    var s = doc.chart.series;
    var traces = [
      { x: s.at, y: s.setWeight, name: "desired weight %", mode: "lines", line: { shape: "hv", color: cssVar("--accent"), dash: "dot", width: 2 } },
      { x: s.at, y: s.actualWeight, name: "actual weight %", mode: "lines", line: { shape: "hv", color: cssVar("--accent"), width: 3 } },
      { x: s.at, y: s.step, name: "step index", mode: "lines", yaxis: "y2", line: { shape: "hv", color: cssVar("--text-3"), width: 1.5 } },
    ];
    // One trace per legend entry the server lists (marker kind and tone), so the legend shows each symbol
    // in its own colour (the red diamond of a hash change or abort included).
    var legend = doc.chart.legend || [];
    var groups = {}, order = [];
    legend.forEach(function (entry) { var k = entry.group + "\u0000" + (entry.tone || ""); groups[k] = []; order.push(k); });
    doc.chart.markers.forEach(function (m) {
      var k = m.group + "\u0000" + (m.tone || "");
      if (groups[k]) groups[k].push(m);
    });
    order = order.filter(function (k) { return groups[k].length; });
    var tonesPer = {};
    order.forEach(function (k) { var g = k.split("\u0000")[0]; tonesPer[g] = (tonesPer[g] || 0) + 1; });
    order.forEach(function (k) {
      var ms = groups[k], group = ms[0].group, tone = ms[0].tone || "";
      var colour = cssVar(TONES[tone] || "--text-3");
      traces.push({ x: ms.map(function (m) { return m.at; }), y: ms.map(function () { return 108; }),
        name: UI.plotText(group + (tonesPer[group] > 1 && tone ? " (" + tone + ")" : "")), mode: "markers",
        marker: { symbol: SYMBOLS[group] || "circle", size: 11, color: colour, line: { width: 1.5, color: colour } },
        text: ms.map(function (m) { return UI.plotText(m.title); }), hoverinfo: "text", customdata: ms.map(function (m) { return m.event; }) });
    });
    var first = doc.frames.length ? doc.frames[Math.max(0, frame)].at : null;
    var layout = {
      margin: { l: 44, r: 44, t: 10, b: 72 }, paper_bgcolor: "rgba(0,0,0,0)", plot_bgcolor: "rgba(0,0,0,0)",
      font: { color: cssVar("--text-2"), size: 11 }, hovermode: "closest", legend: { orientation: "h", y: -0.2, yanchor: "top" },
      xaxis: { type: "date", gridcolor: cssVar("--border") },
      yaxis: { title: { text: "weight %" }, range: [0, 116], gridcolor: cssVar("--border"), zeroline: false },
      yaxis2: { title: { text: "step" }, overlaying: "y", side: "right", rangemode: "tozero", showgrid: false, dtick: 1 },
      shapes: [{ type: "line", xref: "x", yref: "paper", x0: first, x1: first, y0: 0, y1: 1, line: { color: cssVar("--critical"), width: 1.5 } }],
    };
    window.Plotly.react(chartNode, traces, layout, { displayModeBar: false, responsive: true });
    if (!chartNode.__bound) {
      chartNode.__bound = true;
      chartNode.on("plotly_click", function (event) {  // jump the scrubber to the clicked moment
        var point = event.points && event.points[0];
        if (!point) return;
        if (point.customdata !== undefined) { show(doc.events[point.customdata].frame); return; }
        var at = Date.parse(point.x), best = 0;
        doc.frames.forEach(function (f, i) { if (Date.parse(f.at) <= at) best = i; });
        show(best);
      });
    }
  }

  scrub.max = String(Math.max(0, doc.frames.length - 1));
  scrub.addEventListener("input", function () { show(Number(scrub.value)); });
  // Arrow keys anywhere on the page step through moments (the range input handles them itself when focused).
  document.addEventListener("keydown", function (event) {
    if (event.target === scrub || /^(INPUT|SELECT|TEXTAREA)$/.test(event.target.tagName)) return;
    if (event.key === "ArrowLeft") { event.preventDefault(); show(frame - 1); }
    else if (event.key === "ArrowRight") { event.preventDefault(); show(frame + 1); }
  });
  UI.fill(list, events());
  // The known incidents this release went through (the re-render race first of all), as the server
  // names them, each with the moment it was recorded (a click replays that moment).
  var incidents = document.getElementById("release-incidents");
  if (incidents && (doc.incidents || []).length) {
    incidents.hidden = false;
    UI.fill(incidents, doc.incidents.map(function (inc) {
      var li = el("li", { "data-incident": inc.code }, icon("critical"), " ", el("b", { text: inc.title }),
        el("span", { "class": "muted", text: " · " + inc.when }));
      var at = Date.parse(inc.at), best = -1;
      doc.frames.forEach(function (f, i) { if (Date.parse(f.at) <= at) best = i; });
      if (best >= 0) {
        li.appendChild(el("button", { type: "button", "class": "linkbtn", onclick: function () { show(best); } }, " replay that moment"));
      }
      return li;
    }));
  }
  if (doc.frames.length) show(doc.frames.length - 1);
  else label.textContent = "nothing recorded yet";
  window.addEventListener("load", chart);  // plotly loads deferred
  document.addEventListener("themechange", chart);
})();
