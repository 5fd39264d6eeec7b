// Live connection: snapshot first, then updates; resumes from the last stream id after a drop, with
// backoff; closes while the tab is hidden and resumes when it is shown again.
(function () {
  "use strict";

  function connect(path, handlers) {
    var socket = null, lastId = null, attempt = 0, timer = null, silence = null, stopped = false;
    var status = document.getElementById("live-status");

    function show(state, text) {
      if (!status) return;
      status.hidden = false;
      status.setAttribute("data-state", state);
      status.querySelector(".live-text").textContent = text;
      if (handlers.status) handlers.status(state);
    }

    function open() {
      clearTimeout(timer);
      var url = (location.protocol === "https:" ? "wss://" : "ws://") + location.host + path;
      socket = new WebSocket(url);
      socket.onopen = function () {
        attempt = 0;
        socket.send(JSON.stringify(lastId ? { resume: lastId } : {}));
        show("live", "Live");
        watchSilence();
      };
      socket.onmessage = function (event) {
        watchSilence();
        var message = JSON.parse(event.data);
        if (message.streamId) lastId = message.streamId;
        if (message.type === "snapshot") handlers.snapshot(message);
        else if (message.type === "update") handlers.update(message);
        if (message.type !== "ping") show("live", "Live · updated " + new Date().toLocaleTimeString());
      };
      socket.onclose = function (event) {
        clearTimeout(silence);
        socket = null;
        if (stopped) return;
        if (event.code === 4401) { location.reload(); return; }  // session ended: go to the login page
        // 0.5 s, 1 s, 2 s … capped at 15 s, with jitter so a restarted server is not hit all at once.
        var delay = Math.min(15000, 500 * Math.pow(2, attempt++)) * (0.75 + Math.random() * 0.5);
        show("reconnecting", "Reconnecting…");
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
        stopped = true; clearTimeout(timer);
        if (socket) socket.close();
        show("paused", "Paused while hidden");
      } else if (stopped) {
        stopped = false; attempt = 0; open();
      }
    });

    handlers.start = function (streamId) { lastId = streamId || null; open(); };
    return handlers;
  }

  window.Live = { connect: connect };
})();
