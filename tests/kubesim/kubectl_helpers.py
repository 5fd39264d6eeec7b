"""Running Debian's kubectl (1.32) against a kubesim, for the tests that check kubesim from kubectl's side.

Fails loudly when /usr/bin/kubectl is missing: CI installs it (scripts/system-packages.sh), and a check
that silently skipped would prove nothing."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesim.testing import KubesimHandle, running_kubesim

KUBECTL = Path("/usr/bin/kubectl")


def kubesim_for_kubectl() -> Iterator[KubesimHandle]:
    """A module fixture's body: a kubesim to point kubectl at."""
    if not KUBECTL.is_file():
        pytest.fail(f"{KUBECTL} is missing: install Debian's kubernetes-client (kubectl 1.32)")
    with running_kubesim() as handle:
        yield handle


def kubectl(
    sim: KubesimHandle, *args: str, stdin: str | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(
        [str(KUBECTL), "--kubeconfig", str(sim.kubeconfig), "--request-timeout=20s", *args],
        capture_output=True,
        text=True,
        timeout=60,
        input=stdin,
    )
    if check:
        assert result.returncode == 0, result.stderr
    return result
