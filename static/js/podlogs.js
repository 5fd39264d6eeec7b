// Pod logs panel: two panes side by side, each tailing one pod's log over /ws/logs/ (dashboard/web/pod_logs.py).
// The pods each pane offers are the server's (page.logTargets, by ReplicaSet role); a pane asks the cluster
// only while it is tailing and closes its socket when stopped or when the page goes away. Log lines are
// text: they go into the page through textContent only, and the server says which are errors.
(function () {
  "use strict";
  var el = UI.el, fill = UI.fill;
  var MAX_LINES = 1000;  // per pane: the oldest lines leave the page
  var TAIL_LINES = 200;
  var card = document.getElementById("pod-logs");
  if (!card || card.getAttribute("data-allowed") !== "true") return;
  var key = UI.readJSON("rollout-key");
  var initial = UI.readJSON("initial") || {};
  var targets = (initial.page && initial.page.logTargets) || {};

  function roles() { return Object.keys(targets); }
  function podsOf(role) { return targets[role] || []; }

  function Pane(node) {
    this.node = node;
    this.role = node.querySelector(".pl-role");
    this.pod = node.querySelector(".pl-pod");
    this.container = node.querySelector(".pl-container");
    this.since = node.querySelector(".pl-since");
    this.toggle = node.querySelector(".pl-toggle");
    this.state = node.querySelector(".pl-state");
    this.output = node.querySelector(".pl-output");
    this.socket = null;
    var self = this;
    this.picked = false;  // until the user picks a role, the pane follows its default as pods come and go
    this.role.addEventListener("change", function () { self.picked = true; self.fillPods(); self.restart(); });
    this.pod.addEventListener("change", function () { self.fillContainers(); self.restart(); });
    this.container.addEventListener("change", function () { self.restart(); });
    this.since.addEventListener("change", function () { self.restart(); });
    this.toggle.addEventListener("click", function () { if (self.socket) self.stop("Stopped."); else self.start(); });
  }

  function keep(select, options, wanted) {
    var chosen = options.indexOf(wanted) >= 0 ? wanted : options[0];
    return chosen === undefined ? "" : chosen;
  }

  Pane.prototype.fillRoles = function () {
    // A pane that fell back to another role (its default had no pods yet) takes its default as soon as it
    // has pods, unless the user picked a role or the pane is already tailing a pod.
    var fallback = this.picked || this.socket;
    var wanted = fallback ? this.role.value : this.node.getAttribute("data-default-role") || this.role.value;
    var list = roles();
    var chosen = keep(this.role, list, wanted);
    fill(this.role, list.length ? list.map(function (r) { return el("option", { value: r, text: r, selected: r === chosen }); })
      : el("option", { value: "", text: "no pods" }));
    this.fillPods();
  };

  Pane.prototype.fillPods = function () {
    var pods = podsOf(this.role.value);
    var names = pods.map(function (p) { return p.name; });
    var chosen = keep(this.pod, names, this.pod.value);
    fill(this.pod, pods.length ? pods.map(function (p) {
      return el("option", { value: p.name, text: p.name + " · " + p.status + " " + p.ready, selected: p.name === chosen });
    }) : el("option", { value: "", text: "—" }));
    this.fillContainers();
    this.toggle.disabled = !pods.length && !this.socket;
  };

  Pane.prototype.fillContainers = function () {
    var pod = podsOf(this.role.value).filter(function (p) { return p.name === this.pod.value; }, this)[0];
    var names = pod ? pod.containers : [];
    var chosen = keep(this.container, names, this.container.value);
    fill(this.container, names.map(function (c) { return el("option", { value: c, text: c, selected: c === chosen }); }));
    this.node.querySelector(".pl-container-label").hidden = names.length < 2;
  };

  Pane.prototype.restart = function () { if (this.socket) { this.stop(""); this.start(); } };

  Pane.prototype.start = function () {
    if (!this.pod.value) return;
    var self = this;
    var scheme = location.protocol === "https:" ? "wss://" : "ws://";
    var socket = new WebSocket(scheme + location.host + "/ws/logs/" + key.split("/").map(encodeURIComponent).join("/") + "/");
    this.socket = socket;
    clearNode(this.output);
    this.toggle.textContent = "Stop";
    this.node.setAttribute("data-state", "connecting");
    this.state.textContent = "Connecting…";
    var request = { pod: this.pod.value, container: this.container.value || null, tailLines: TAIL_LINES };
    if (this.since.value) request.sinceSeconds = Number(this.since.value);
    socket.onopen = function () { socket.send(JSON.stringify(request)); };
    socket.onmessage = function (event) { if (self.socket === socket) self.receive(JSON.parse(event.data)); };
    socket.onclose = function (event) {
      if (self.socket !== socket) return;
      self.socket = null;
      self.toggle.textContent = "Tail";
      self.node.setAttribute("data-state", "stopped");
      if (self.node.getAttribute("data-ended") !== "true") {
        self.state.textContent = event.code === 4403 ? "Not allowed to read these logs." : "Disconnected.";
      }
    };
  };

  Pane.prototype.stop = function (text) {
    var socket = this.socket;
    this.socket = null;
    if (socket) socket.close();
    this.toggle.textContent = "Tail";
    this.node.setAttribute("data-state", "stopped");
    if (text) this.state.textContent = text;
  };

  Pane.prototype.receive = function (m) {
    if (m.type === "started") {
      this.node.setAttribute("data-ended", "false");
      this.node.setAttribute("data-state", "tailing");
      this.node.setAttribute("data-pod", m.pod);
      this.state.textContent = "Tailing " + m.pod + (m.container ? " / " + m.container : "") + " (" + m.role + ")";
    } else if (m.type === "lines") {
      this.append(m.lines, m.errors || []);
    } else if (m.type === "dropped") {
      this.append(["… " + m.count + " lines skipped (the page read slower than the pod wrote) …"], []);
    } else if (m.type === "end" || m.type === "error") {
      // The stream is over (the pod went away, or the request was refused): the pane says why and offers
      // Tail again, rather than a Stop button over a log that no longer flows.
      this.node.setAttribute("data-ended", "true");
      this.stop((m.field ? m.field + ": " : "") + m.message);
    }
  };

  Pane.prototype.append = function (lines, errors) {
    var out = this.output;
    var atBottom = out.scrollTop + out.clientHeight >= out.scrollHeight - 4;
    var marked = {};
    errors.forEach(function (i) { marked[i] = true; });
    var frag = document.createDocumentFragment();
    lines.forEach(function (line, i) {
      frag.appendChild(el("span", { "class": marked[i] ? "pl-line pl-error" : "pl-line", text: line + "\n" }));
    });
    out.appendChild(frag);
    while (out.childNodes.length > MAX_LINES) out.removeChild(out.firstChild);
    if (atBottom) out.scrollTop = out.scrollHeight;
  };

  function clearNode(node) { while (node.firstChild) node.removeChild(node.firstChild); }

  var panes = Array.prototype.map.call(card.querySelectorAll(".podlogs-pane"), function (node) { return new Pane(node); });
  panes.forEach(function (p) { p.fillRoles(); });
  document.addEventListener("rolloutpage", function (event) {
    targets = (event.detail && event.detail.logTargets) || {};
    panes.forEach(function (p) { p.fillRoles(); });
  });
  window.addEventListener("pagehide", function () { panes.forEach(function (p) { p.stop(""); }); });
})();
