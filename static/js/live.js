// Live connection: snapshot first, then updates; resumes from the last stream id after a drop, with
// backoff; closes while the tab is hidden and resumes when it is shown again.
//
// The "Live" dot is green only while all three hold: this page's websocket is open, the server reaches
// Redis (the live bus), and every cluster's data is fresh and loaded. /api/v1/live-status (polled every
// 10 s, every 2 s while a cluster loads) says the last two; the banner under the top bar says what is
// wrong and since when ("stale since …" per cluster, or "loading" with how many rollouts are current).
// Everything shown is text (textContent), never HTML from the server.
(function () {
  "use strict";

  var STATUS_URL = "/api/v1/live-status";
  var POLL_MS = 10000;
  var LOADING_POLL_MS = 2000;  // while a cluster's watcher publishes its fleet, its count moves by the second
  var RESTART_RETRY_MS = 30000;  // how long a page retries quickly after the server said it restarts

  function clock(iso) {
    if (!iso) return "start";
    var when = new Date(iso);
    return isNaN(when) ? iso : when.toLocaleTimeString();
  }

  // What the server says about freshness, and the banner lines it makes.
  function problems(status) {
    var lines = [];
    if (!status) return lines;
    if (status.bus && !status.bus.ok) {
      lines.push({ level: "down", text: "Live updates are down since " + clock(status.bus.downSince) +
        ": the server cannot reach Redis. What you see may be out of date; it recovers by itself." });
    }
    (status.clusters || []).forEach(function (c) {
      if (c.stale) {
        var why = c.reason + (c.failing && c.failing.length ? " (" + c.failing[0].error + ")" : "");
        lines.push({ level: "stale", text: "Cluster " + c.cluster + ": stale since " + clock(c.staleSince) + " — " + why + "." });
        return;
      }
      if (c.loading) {
        lines.push({ level: "loading", text: "Cluster " + c.cluster + ": loading" +
          (c.loadingSince ? " since " + clock(c.loadingSince) : "") + " — " + c.reason +
          ". Until it is done some of its rollouts are missing here or out of date." });
      }
      if (c.failing && c.failing.length) {
        lines.push({ level: "failing", text: "Cluster " + c.cluster + ": watch " + c.failing[0].watch +
          " failing since " + clock(c.failing[0].since) + " — " + c.failing[0].error });
      }
    });
    return lines;
  }

  function connect(path, handlers) {
    var socket = null, lastId = null, attempt = 0, timer = null, silence = null, stopped = false, restartingUntil = 0;
    var status = document.getElementById("live-status");
    var banner = document.getElementById("live-banner");
    var socketState = "connecting", updatedAt = null, server = null, poller = null;

    // One place decides what the dot and the banner say.
    function render() {
      var lines = problems(server);
      var state, text;
      if (socketState === "paused") { state = "paused"; text = "Paused while hidden"; }
      else if (socketState !== "open") { state = "reconnecting"; text = socketState === "connecting" ? "Connecting…" : "Reconnecting…"; }
      else if (server === "unreachable") { state = "down"; text = "Server unreachable"; }
      else if (lines.some(function (l) { return l.level === "down"; })) { state = "down"; text = "Live updates down"; }
      else if (lines.some(function (l) { return l.level === "stale"; })) { state = "stale"; text = "Stale data"; }
      else if (lines.some(function (l) { return l.level === "loading"; })) { state = "loading"; text = "Loading…"; }
      else { state = "live"; text = updatedAt ? "Live · updated " + updatedAt : "Live"; }
      if (status) {
        status.hidden = false;
        status.setAttribute("data-state", state);
        status.querySelector(".live-text").textContent = text;
      }
      if (banner) {
        while (banner.firstChild) banner.removeChild(banner.firstChild);
        lines.forEach(function (line) {
          var p = document.createElement("p");
          p.className = "live-banner-line";
          p.setAttribute("data-level", line.level);
          p.textContent = line.text;
          banner.appendChild(p);
        });
        banner.hidden = lines.length === 0;
      }
      if (handlers.status) handlers.status(state);
    }

    function poll() {
      clearTimeout(poller);
      if (stopped) return;
      fetch(STATUS_URL, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (r) { return r.ok ? r.json() : null; })
        .then(function (body) { server = body || server; render(); })
        .catch(function () { server = "unreachable"; render(); })
        .then(function () {
          var loading = server && server.clusters && server.clusters.some(function (c) { return c.loading; });
          poller = setTimeout(poll, loading ? LOADING_POLL_MS : POLL_MS);
        });
    }

    function open() {
      clearTimeout(timer);
      var url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + path;
      socket = new WebSocket(url);
      socket.onopen = function () {
        attempt = 0; restartingUntil = 0;
        socket.send(JSON.stringify(lastId ? { resume: lastId } : {}));
        socketState = "open";
        render();
        watchSilence();
        poll();  // a reconnect is a good moment to ask whether the data is fresh
      };
      socket.onmessage = function (event) {
        watchSilence();
        var message = JSON.parse(event.data);
        if (message.streamId) lastId = message.streamId;
        if (message.type === "snapshot") handlers.snapshot(message);
        else if (message.type === "update") handlers.update(message);
        if (message.type !== "ping") { updatedAt = new Date().toLocaleTimeString(); render(); }
      };
      socket.onclose = function (event) {
        clearTimeout(silence);
        socket = null;
        if (stopped) return;
        if (event.code === 4401) { location.reload(); return; }  // session ended: go to the login page
        // The server said it is restarting (1012) or going away (1001, a deploy's SIGTERM): it is back in
        // seconds, so try every ~0.5 s for up to 30 s rather than waiting out a growing backoff (0.5 + 1 +
        // 2 + 4 s left pages of a server back after 4 s reconnecting at 7.5 s).
        if (event.code === 1012 || event.code === 1001) restartingUntil = Date.now() + RESTART_RETRY_MS;
        var delay = Date.now() < restartingUntil ? 500 * (0.75 + Math.random() * 0.5)
          // 0.5 s, 1 s, 2 s … capped at 15 s, with jitter so a restarted server is not hit all at once.
          : Math.min(15000, 500 * Math.pow(2, attempt++)) * (0.75 + Math.random() * 0.5);
        socketState = "reconnecting";
        render();
        timer = setTimeout(open, delay);
      };
    }

    // Pings come every ~20 s; a silent minute means a dead connection the browser has not noticed.
    function watchSilence() {
      clearTimeout(silence);
      silence = setTimeout(function () { if (socket) socket.close(); }, 60000);
    }

    document.addEventListener("visibilitychange", function () {
      if (document.hidden) {
        stopped = true; clearTimeout(timer); clearTimeout(poller);
        if (socket) socket.close();
        socketState = "paused";
        render();
      } else if (stopped) {
        stopped = false; attempt = 0; socketState = "connecting"; open(); poll();
      }
    });

    handlers.start = function (streamId) { lastId = streamId || null; open(); poll(); };
    return handlers;
  }

  window.Live = { connect: connect, problems: problems };
})();
