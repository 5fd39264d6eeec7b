"""The live bus: how the watcher hands current state to every web process.

Contract (stable; the web part reads it):

- ``get_bus()`` (``dashboard.live.bus``) returns a ``LiveBus``: Redis when ``settings.REDIS_URL`` is set,
  else an in-process store with the same semantics (embedded mode). All methods are async.
  - ``publish(view, events) -> stream_id`` / ``publish_many([(view, events), ...], built, texts)`` — the
    watcher only; ``built`` maps rollout keys to what each view was built from (kept until the key is
    removed); ``texts``, when given, are the views' JSON already (the watcher's digest made it).
  - ``remove(key) -> stream_id`` — the rollout is gone.
  - ``held_keys(cluster)``, ``built_records(cluster)``, ``snapshots_of(keys)`` — what a resyncing watcher
    reads of what the bus holds (``snapshots(cluster)`` reads every view of a cluster at once).
  - ``snapshot(key) -> dict | None`` — the latest RolloutView of ``"{cluster}/{namespace}/{name}"``.
  - ``fleet() -> list[dict]`` — one compact row per rollout, sorted by key (``fleet_row`` lists fields).
  - ``read_since(stream_id, *, key=None, count=100) -> [(id, entry)]`` — updates strictly after
    ``stream_id`` (``"0-0"`` for all kept), optionally only one rollout's. Raises ``StreamTrimmed`` when the
    id is older than the oldest update kept: send the snapshot again. An entry is
    ``{"key", "op": "update"|"remove", "view": dict|None, "row": dict|None, "events": [timeline events]}``.
  - ``last_id() -> str`` — the newest stream id (``"0-0"`` when empty).
  - ``incarnation() -> str`` — changes when the store may have lost data (Redis restarted or the bus's
    keys were flushed): the watcher then republishes everything it holds.
  - ``report_cluster(cluster, report)`` / ``cluster_reports() -> {cluster: report}`` — each cluster's
    freshness, written by its watcher every few seconds (``dashboard.live.freshness`` reads it).
  - Store failures raise ``BusError``; a malformed stream id raises ``ValueError`` naming it.
- Resuming without loss: read ``last_id()`` BEFORE ``snapshot()``/``fleet()``, send those, then
  ``read_since(that id)``; updates carry full views, so applying one twice is harmless.
- Order: a publish writes snapshot + fleet row + stream entry in one Redis transaction; that is all it does.
  Readers learn of it from the stream: ``wait_for_entry(after, timeout) -> id | None`` returns at once when
  an entry newer than ``after`` is kept, else when one is written (a blocking ``XREAD``), or None after
  ``timeout``; each web process's stream follower waits so, once.
- Redis keys (prefix ``settings.LIVE_REDIS_PREFIX``, default ``rollouts-ui:``): ``snap`` and ``fleet``
  (hashes keyed by rollout key), ``built`` (hash by rollout key: what each view was built from, written in
  the publish's transaction; ``dashboard.kube.fingerprint``), ``stream`` (capped at
  ``settings.LIVE_STREAM_MAXLEN``),
  ``lease:{cluster}`` (``dashboard.live.lease``: which watcher of a cluster publishes), ``clusters`` (hash:
  cluster → freshness report), ``epoch`` (set once per store; gone means the keys were flushed).

Non-goals: history (``dashboard.history``), access control (the web layer filters what it shows).
"""
