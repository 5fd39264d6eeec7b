// DOM helpers. Data from Kubernetes only ever reaches the page through textContent and setAttribute
// (never innerHTML), so nothing in an object can become markup.
(function () {
  "use strict";
  var SVG = "http://www.w3.org/2000/svg";

  function el(tag, attrs) {
    var node = document.createElement(tag);
    setAttrs(node, attrs);
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }

  function svg(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    setAttrs(node, attrs);
    for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
    return node;
  }

  function setAttrs(node, attrs) {
    if (!attrs) return;
    Object.keys(attrs).forEach(function (name) {
      var value = attrs[name];
      if (value === null || value === undefined || value === false) return;
      if (name === "text") node.textContent = String(value);
      else if (name.slice(0, 2) === "on" && typeof value === "function") node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : String(value));
    });
  }

  function append(node, child) {
    if (child === null || child === undefined || child === false) return;
    if (Array.isArray(child)) { child.forEach(function (c) { append(node, c); }); return; }
    node.appendChild(typeof child === "string" || typeof child === "number"
      ? document.createTextNode(String(child)) : child);
  }

  function icon(name, cls) {
    var use = svg("use", { href: "#i-" + name });
    return svg("svg", { "class": "icon s-" + name + (cls ? " " + cls : ""), "aria-hidden": "true" }, use);
  }

  function clear(node) { while (node.firstChild) node.removeChild(node.firstChild); return node; }
  function fill(node) { clear(node); for (var i = 1; i < arguments.length; i++) append(node, arguments[i]); return node; }

  function readJSON(id) {
    var node = document.getElementById(id);
    return node ? JSON.parse(node.textContent) : null;
  }

  function countdown(iso) {
    var left = Math.round((Date.parse(iso) - Date.now()) / 1000);
    if (isNaN(left)) return "";
    if (left <= 0) return "0 s left";
    var m = Math.floor(left / 60), s = left % 60;
    return (m ? m + " m " : "") + s + " s left";
  }

  // The progressive-delivery controller's mark: steps for Argo Rollouts, a flag for Flagger.
  var CONTROLLER_PATHS = {
    "argo-rollouts": "M2 13h3v-3h3V7h3V4h3",
    "flagger": "M4 14.5V2M4 2.5h8.5l-2.2 3 2.2 3H4",
  };
  function controllerIcon(name) {
    var d = CONTROLLER_PATHS[name] || CONTROLLER_PATHS["argo-rollouts"];
    return svg("svg", { "class": "icon ctl ctl-" + (name || "argo-rollouts"), viewBox: "0 0 16 16", "aria-hidden": "true" },
      svg("path", { d: d, fill: "none", stroke: "currentColor", "stroke-width": 1.6, "stroke-linecap": "round", "stroke-linejoin": "round" }));
  }

  // Plotly reads a little HTML in its strings (<br>, <b>, <a href>); anything from a Kubernetes object or
  // Prometheus goes in as entities, so it is shown as typed and never as markup.
  function plotText(value) {
    return String(value === undefined || value === null ? "" : value)
      .replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  }
  // The one status → look map of the browser: the server names a tone (and an icon) for every status,
  // severity and role; this only turns the name into a class. Unknown names read as neutral, never as
  // the accent (the accent means live traffic / progressing).
  var TONES = { critical: 1, warning: 1, healthy: 1, accent: 1, progressing: 1, paused: 1, info: 1, neutral: 1, unknown: 1, degraded: 1 };
  function toneClass(name) { return "tone-" + (TONES[name] ? name : "neutral"); }

  window.UI = { toneClass: toneClass, el: el, svg: svg, icon: icon, controllerIcon: controllerIcon, clear: clear, fill: fill, readJSON: readJSON,
    countdown: countdown, plotText: plotText };
})();
