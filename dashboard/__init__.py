"""rollouts-ui's application. The folders follow the data flow of DESIGN §1:

- ``kube/``    Kubernetes access: the watcher (list + watch → cache) and, later, the actions that patch.
- ``domain/``  pure functions of Kubernetes objects and time: views, findings, timelines. No Django, no I/O.
- ``live/``    the live bus: snapshots and the update stream in Redis, which wakes its readers itself.
- ``history/`` the database record of releases and timeline events.
- ``access/``  who may see and do what.
- ``web/``     pages, JSON API and websocket consumers.

The domain runs compiled when ``make compile`` has built it for these sources (``compiled.py``): the finder
goes in here, before anything can import a domain module.
"""

from dashboard.compiled import install

install()
