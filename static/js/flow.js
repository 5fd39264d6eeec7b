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

  function fit(value, width, size) {  // keep long names inside their box
    var max = Math.floor(width / (size * 0.56));
    return value.length > max ? value.slice(0, Math.max(1, max - 1)) + "…" : value;
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
    var cls = "node node-" + node.id + (node.observed ? "" : " unobserved") + (node.dashed ? " dashed" : "") +
      (node.alert ? " alert-" + node.alert : "") + (node.faded ? " faded" : "");
    var g = svg("g", { "class": cls, "data-node": node.id });
    var title = svg("title"); title.textContent = node.kind + ": " + node.title + (node.hint ? " — " + node.hint : ""); g.appendChild(title);
    g.appendChild(svg("rect", { "class": "box", x: node.x, y: node.y, width: node.w, height: node.h, rx: 8 }));
    var x = node.x + 12, y = node.y + 20;
    g.appendChild(text(x, y, "kind", fit(node.kind.toUpperCase(), node.w - 40, 11)));
    if (node.status) g.appendChild(iconAt(node.status, node.x + node.w - 26, node.y + 8));
    y += 22;
    var heading = text(x, y, "title" + (node.mono ? " mono" : "") + (node.url ? " link" : ""), fit(node.title, node.w - 24, node.mono ? 15 : 16));
    g.appendChild(link(node.url, heading));
    if (node.big) { y += 30; g.appendChild(text(x, y, "big", node.big)); }
    (node.lines || []).forEach(function (line) {
      y += 18;
      var value = line.until ? "Pause · " + UI.countdown(line.until) : line.text;
      var attrs = line.until ? { "data-until": line.until } : null;
      var indent = line.icon ? 18 : 0;
      if (line.icon) g.appendChild(iconAt(line.icon, x, y - 12));
      g.appendChild(link(line.url, text(x + indent, y, "line " + (line.cls || "") + (line.url ? " link" : ""), fit(value, node.w - 24 - indent, 12.5), attrs)));
    });
    if (node.marker) {
      var mh = node.marker.sub ? 38 : 22, my = node.y + node.h + 6;
      g.appendChild(svg("rect", { "class": "marker-bg " + node.marker.cls, x: node.x, y: my, width: node.w, height: mh, rx: 6 }));
      g.appendChild(text(x, my + 15, "marker " + node.marker.cls, fit(node.marker.text, node.w - 20, 12),
        { "data-marker": node.marker.role || (node.marker.reset ? "step-reset" : "hash-change") }));
      if (node.marker.sub) g.appendChild(text(x, my + 31, "marker " + node.marker.cls, node.marker.sub, { "data-marker": "hashes" }));
    }
    return g;
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
    flow.columns.forEach(function (col) { target.appendChild(text(col.x, 14, "col-label", col.label)); });
    flow.edges.forEach(function (edge) { if (edge.to !== "users") target.appendChild(drawEdge(edge)); });
    flow.nodes.forEach(function (node) { target.appendChild(drawNode(node)); });
    flow.edges.forEach(function (edge) { if (edge.to === "users") target.appendChild(drawEdge(edge)); });
  }

  // Timed pauses count down between updates.
  setInterval(function () {
    document.querySelectorAll("[data-until]").forEach(function (node) {
      node.textContent = "Pause · " + UI.countdown(node.getAttribute("data-until"));
    });
  }, 1000);

  window.Flow = { draw: draw };
})();
