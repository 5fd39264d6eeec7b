// Draws the delivery-flow document (laid out on the server, see dashboard/web/flow.py) as SVG.
(function () {
  "use strict";
  var svg = UI.svg;

  function text(x, y, cls, value, extra) {
    var attrs = { x: x, y: y, "class": cls };
    if (extra) Object.keys(extra).forEach(function (k) { attrs[k] = extra[k]; });
    var node = svg("text", attrs);
    node.textContent = value;
    return node;
  }

  // A text that may not fit its box is measured once it is in the page and cut with "…" to the width
  // it has; its whole value stays in a tooltip (and in the node's description under the diagram).
  function fitted(x, y, cls, value, width, size, extra, full) {
    var node = text(x, y, cls, value, extra);
    node.setAttribute("data-fit", Math.max(8, Math.floor(width)));
    if (full && full !== value) node.setAttribute("data-full", full);
    return node;
  }

  function cut(node) {
    var width = Number(node.getAttribute("data-fit"));
    var whole = node.textContent, shown = whole;
    if (node.getComputedTextLength() > width) {
      var lo = 1, hi = whole.length;
      while (lo < hi) {  // the longest prefix that fits with its ellipsis
        var mid = Math.ceil((lo + hi) / 2);
        node.textContent = whole.slice(0, mid) + "…";
        if (node.getComputedTextLength() <= width) lo = mid; else hi = mid - 1;
      }
      shown = whole.slice(0, lo).replace(/\s+$/, "") + "…";
      node.textContent = shown;
    }
    var full = node.getAttribute("data-full") || whole;
    if (shown !== full) { var tip = svg("title"); tip.textContent = full; node.appendChild(tip); }
  }

  // Links come from webhook payloads; the presenter passes only http(s) URLs (dashboard/web/chain.py).
  function link(url, child) {
    if (!url) return child;
    return svg("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, child);
  }

  function iconAt(name, x, y) {
    return svg("svg", { x: x, y: y, width: 16, height: 16, "class": "icon s-" + name }, svg("use", { href: "#i-" + name }));
  }

  function drawNode(node) {
    var cls = "node node-" + node.id + (node.tone ? " " + UI.toneClass(node.tone) : "") + (node.role ? " role-" + node.role : "") + (node.observed ? "" : " unobserved") + (node.dashed ? " dashed" : "") +
      (node.alert ? " alert-" + node.alert : "") + (node.faded ? " faded" : "");
    var g = svg("g", { "class": cls, "data-node": node.id, "data-role": node.role || null, tabindex: 0, role: "img", "aria-label": describe(node) });
    var title = svg("title"); title.textContent = describe(node); g.appendChild(title);
    g.appendChild(svg("rect", { "class": "box", x: node.x, y: node.y, width: node.w, height: node.h, rx: 8 }));
    var x = node.x + 12, y = node.y + 20;
    g.appendChild(fitted(x, y, "kind", node.kind.toUpperCase(), node.w - 40, 11));
    if (node.status) g.appendChild(iconAt(node.status, node.x + node.w - 26, node.y + 8));
    y += 22;
    var heading = fitted(x, y, "title" + (node.mono ? " mono" : "") + (node.url ? " link" : ""), node.title, node.w - 24,
      node.observed ? (node.mono ? 15 : 16) : 13);
    g.appendChild(link(node.url, heading));
    if (node.big) { y += 30; g.appendChild(text(x, y, "big", node.big)); }
    (node.lines || []).forEach(function (line) {
      y += 18;
      var value = line.until ? "Pause · " + UI.countdown(line.until) : line.text;
      var attrs = line.until ? { "data-until": line.until } : null;
      var indent = line.icon ? 18 : (line.indent || 0);
      if (line.icon) g.appendChild(iconAt(line.icon, x, y - 12));
      g.appendChild(link(line.url, fitted(x + indent, y, "line " + (line.cls || "") + (line.url ? " link" : ""), value,
        node.w - 24 - indent, 12.5, attrs, line.until ? null : line.full)));
    });
    if (node.marker) {
      var mh = node.marker.sub ? 38 : 22, my = node.y + node.h + 6;
      g.appendChild(svg("rect", { "class": "marker-bg " + node.marker.cls, x: node.x, y: my, width: node.w, height: mh, rx: 6 }));
      g.appendChild(fitted(x, my + 15, "marker " + node.marker.cls, node.marker.text, node.w - 20, 12,
        { "data-marker": node.marker.role || (node.marker.reset ? "step-reset" : "hash-change") }));
      if (node.marker.sub) g.appendChild(fitted(x, my + 31, "marker " + node.marker.cls, node.marker.sub, node.w - 20, 12, { "data-marker": "hashes" }));
    }
    return g;
  }

  // Everything a node says, uncut: its tooltip, its accessible name and the details line under the diagram.
  function describe(node) {
    var seen = {}, lines = [];
    (node.lines || []).forEach(function (line) {
      var whole = line.until ? "Pause · " + UI.countdown(line.until) : (line.full || line.text);
      if (!seen[whole]) { seen[whole] = true; lines.push(whole); }
    });
    var parts = [node.kind + ": " + node.title].concat(node.big ? [node.big] : [], lines);
    if (node.marker) parts.push(node.marker.text + (node.marker.sub ? " (" + node.marker.sub + ")" : ""));
    if (node.hint && lines.indexOf(node.hint) < 0 && node.hint !== node.title) parts.push(node.hint);
    return parts.join(" · ");
  }

  function drawEdge(edge) {
    var g = svg("g", { "class": "edge-g", "data-edge": edge.from + "-" + edge.to });
    g.appendChild(svg("path", { d: edge.d, "class": "edge" + (edge.dashed ? " dashed" : "") + (edge.live ? " live" : ""),
      "stroke-width": edge.width, "marker-end": edge.live ? null : "url(#arrow)" }));
    if (edge.label) {
      var w = Math.max(40, edge.label.length * 7.4 + 14), h = edge.sub ? 32 : 20;
      g.appendChild(svg("rect", { "class": "elabel-bg", x: edge.lx - w / 2, y: edge.ly - 14, width: w, height: h, rx: 10 }));
      g.appendChild(text(edge.lx, edge.ly, "elabel", edge.label, { "text-anchor": "middle", "data-weight": edge.to === "users" ? edge.from : null }));
      if (edge.sub) g.appendChild(text(edge.lx, edge.ly + 13, "elabel sub", edge.sub, { "text-anchor": "middle" }));
    }
    return g;
  }

  function draw(target, flow) {
    UI.clear(target);
    target.setAttribute("viewBox", "0 0 " + flow.width + " " + (flow.height + 30));
    var defs = svg("defs", null, svg("marker", { id: "arrow", viewBox: "0 0 8 8", refX: 7, refY: 4, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" },
      svg("path", { d: "M0,0 L8,4 L0,8 z", fill: "currentColor", "class": "s-unknown" })));
    target.appendChild(defs);
    flow.columns.forEach(function (col, i) {
      var next = flow.columns[i + 1];
      target.appendChild(fitted(col.x, 14, "col-label", col.label, (next ? next.x - col.x : flow.width - col.x) - 12, 11));
    });
    flow.edges.forEach(function (edge) { if (edge.to !== "users") target.appendChild(drawEdge(edge)); });
    flow.nodes.forEach(function (node) { target.appendChild(drawNode(node)); });
    flow.edges.forEach(function (edge) { if (edge.to === "users") target.appendChild(drawEdge(edge)); });
    Array.prototype.forEach.call(target.querySelectorAll("text[data-fit]"), cut);
    var detail = document.getElementById("flow-detail");
    if (detail) {
      var chosen = detail.getAttribute("data-node");
      var node = flow.nodes.filter(function (n) { return n.id === chosen; })[0];
      detail.textContent = node ? describe(node) : "Select a node (click, or Tab to it) to read everything it says.";
    }
  }

  // Clicking or focusing a node writes its whole text under the diagram (nothing in a node is lost to "…").
  function show(event) {
    var g = event.target.closest ? event.target.closest("[data-node]") : null;
    var detail = document.getElementById("flow-detail");
    if (!g || !detail) return;
    detail.setAttribute("data-node", g.getAttribute("data-node"));
    detail.textContent = g.getAttribute("aria-label");
  }
  document.addEventListener("click", function (e) { if (e.target.closest && e.target.closest("svg.flow")) show(e); });
  document.addEventListener("focusin", function (e) { if (e.target.closest && e.target.closest("svg.flow")) show(e); });

  // Timed pauses count down between updates.
  setInterval(function () {
    document.querySelectorAll("[data-until]").forEach(function (node) {
      node.textContent = "Pause · " + UI.countdown(node.getAttribute("data-until"));
    });
  }, 1000);

  window.Flow = { draw: draw };
})();
