"""kubesim: a simulated Kubernetes cluster running Argo Rollouts and Argo CD, for the demo and the tests.

Real clients (the official `kubernetes` Python client, `kubectl`) talk to it over HTTP as to a small cluster.
The store (`kubesim.store`) holds the objects, the API server (`kubesim.server`) serves them, faults
(`kubesim.faults`) make it misbehave on purpose, and the controller (`kubesim.controller`, driven by
`kubesim.simulation`) plays Argo Rollouts and Argo CD. `python -m kubesim serve` runs it all; tests use
`kubesim.testing`. The dashboard never imports this package.
"""
