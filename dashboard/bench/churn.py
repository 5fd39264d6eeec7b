"""The churn driver: new images on random fleet rollouts, written to kubesim at a steady rate.

The harness writes the churn itself (the fleet scenario runs with its own churn off) so that it knows
exactly when each change was written and which resourceVersion kubesim gave it — the start of every
end-to-end delay. The write is the one the fleet scenario's churn makes (a JSON patch of the first
container's image); kubesim's controllers then carry each rollout through its canary steps, and those
writes are what the watcher ingests.

Non-goals: other kinds of change (the controllers make them), retrying failed writes (they are counted).
"""

from __future__ import annotations

import asyncio
import base64
import random
import ssl
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import yaml

from dashboard.bench.analysis import Write

ROLLOUTS = "/apis/argoproj.io/v1alpha1/namespaces/{namespace}/rollouts/{name}"


@dataclass(frozen=True)
class Cluster:
    """One simulated cluster as the harness sees it: name, API URL, token, CA, and its fleet's shape."""

    name: str
    url: str
    token: str
    ca_pem: str
    rollouts: int
    namespaces: int

    @classmethod
    def from_kubeconfig(cls, name: str, path: Path, rollouts: int, namespaces: int) -> Cluster:
        config = yaml.safe_load(path.read_text())
        cluster = config["clusters"][0]["cluster"]
        user = config["users"][0]["user"]
        ca = base64.b64decode(cluster["certificate-authority-data"]).decode()
        return cls(name, cluster["server"], user["token"], ca, rollouts, namespaces)

    def ssl_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cadata=self.ca_pem)

    def rollout(self, index: int) -> tuple[str, str]:
        """(namespace, name) of fleet rollout ``index``, as kubesim's fleet scenario names them."""
        return f"fleet-{index % self.namespaces:02d}", f"svc-{index:05d}"

    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


@dataclass
class ChurnResult:
    writes: list[Write] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)
    started: float = 0.0
    ended: float = 0.0


async def resource_version(session: aiohttp.ClientSession, cluster: Cluster) -> int:
    """kubesim's current resourceVersion: how many writes it has made so far."""
    async with session.get(
        cluster.url + "/kubesim/healthz", headers=cluster.headers(), ssl=cluster.ssl_context()
    ) as response:
        return int((await response.json())["resourceVersion"])


WARM_CONNECTIONS = 4  # per cluster, opened before the first write


async def _touch(session: aiohttp.ClientSession, cluster: Cluster, context: ssl.SSLContext) -> None:
    async with session.get(cluster.url + "/version", headers=cluster.headers(), ssl=context) as response:
        await response.read()


async def churn(
    clusters: list[Cluster], rate: float, seconds: float, *, seed: int = 1, concurrency: int = 64
) -> ChurnResult:
    """Write ``rate`` new images a second (spread over ``clusters``) for ``seconds``."""
    rng = random.Random(seed)
    result = ChurnResult()
    contexts = {c.name: c.ssl_context() for c in clusters}
    limit = asyncio.Semaphore(concurrency)
    pending: set[asyncio.Task[None]] = set()
    timeout = aiohttp.ClientTimeout(total=30)

    async with aiohttp.ClientSession(timeout=timeout, connector=aiohttp.TCPConnector(limit=0)) as session:

        async def write(cluster: Cluster, index: int, version: int) -> None:
            namespace, name = cluster.rollout(index)
            body = [
                {
                    "op": "replace",
                    "path": "/spec/template/spec/containers/0/image",
                    "value": f"registry.example.com/svc:2.{version}",
                }
            ]
            async with limit:
                at = time.time()
                try:
                    async with session.patch(
                        cluster.url + ROLLOUTS.format(namespace=namespace, name=name),
                        json=body,
                        headers={**cluster.headers(), "Content-Type": "application/json-patch+json"},
                        ssl=contexts[cluster.name],
                    ) as response:
                        data: Any = await response.json(content_type=None)
                        stamp = response.headers.get("Kubesim-Committed-At")
                        if response.status != 200:
                            result.failures.append(
                                f"{cluster.name}/{namespace}/{name}: HTTP {response.status}"
                            )
                            return
                except (aiohttp.ClientError, TimeoutError) as error:
                    result.failures.append(f"{cluster.name}/{namespace}/{name}: {error!r}")
                    return
                answered = time.time()
            version_text = data["metadata"]["resourceVersion"]
            key, committed = f"{cluster.name}/{namespace}/{name}", float(stamp) if stamp else None
            result.writes.append(Write(key, int(version_text), at, answered, committed))

        # Open the connections first, as a cluster's long-running writers have theirs: a write that also
        # paid for a TLS handshake with a busy simulator took up to half a second (the smoke run's p99
        # request), which is the harness's cost, not the pipeline's.
        warm = [cluster for cluster in clusters for _ in range(WARM_CONNECTIONS)]
        await asyncio.gather(*(_touch(session, cluster, contexts[cluster.name]) for cluster in warm))
        result.started = time.time()
        start = time.monotonic()
        total = int(rate * seconds)
        for n in range(total):
            due = start + n / rate
            pause = due - time.monotonic()
            if pause > 0:
                await asyncio.sleep(pause)
            cluster = clusters[n % len(clusters)]
            task = asyncio.create_task(write(cluster, rng.randrange(cluster.rollouts), n))
            pending.add(task)
            task.add_done_callback(pending.discard)
        if pending:
            await asyncio.gather(*pending)
        result.ended = time.time()
    return result
