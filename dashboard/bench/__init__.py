"""The fleet-scale benchmark harness behind ``manage.py bench`` (issue 11).

It runs the whole pipeline as separate processes — kubesim with the fleet scenario, the watcher(s), the
ASGI server(s) and websocket clients that subscribe like the fleet page — and measures ingest,
end-to-end delay, loss, page speed, memory and this machine's raw limits, as JSON and an HTML report.

Modules: ``analysis`` (pure: percentiles, delays, loss), ``processes`` (spawning and reaping),
``clients`` (the websocket client process), ``churn`` (new images written to kubesim), ``monitor`` (the
bus stream and resource samples), ``limits`` (raw Redis and channel-layer limits), ``browser``
(Playwright), ``report`` (JSON and HTML), ``run`` (the layouts). The single-part benchmarks live here
too: ``watch`` (the watcher, ``manage.py bench_watch``) and ``web`` (the fleet page and live delay,
``manage.py bench_web``); the simulator's own is ``kubesim.bench``. Non-goals: asserting targets (figures
are printed and compared with the targets, never asserted) and tuning the code under test.
"""
