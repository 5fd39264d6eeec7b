"""``scripts/system-packages.sh``: `make test` stops naming what to install; `make demo` never stops.

Run as a user that is not root (a fake ``id``) on a PATH without the packages, so nothing is installed.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BASH = shutil.which("bash") or "/bin/bash"


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    fake_id = bin_dir / "id"
    fake_id.write_text("#!/bin/sh\necho 1000\n")
    fake_id.chmod(0o755)
    return subprocess.run(
        [BASH, str(ROOT / "scripts" / "system-packages.sh"), *args],
        env={"PATH": str(bin_dir)},
        capture_output=True,
        text=True,
        timeout=30,
    )


def test_make_test_stops_and_names_the_packages_and_the_command(tmp_path: Path) -> None:
    done = _run(tmp_path)
    assert done.returncode == 1
    assert done.stderr.startswith("missing system packages: prometheus chromium kubernetes-client")
    assert "postgresql gcc libc6-dev —" in done.stderr  # gcc: `make compile`
    assert "sudo apt-get install prometheus chromium" in done.stderr


def test_make_demo_goes_on_without_prometheus_and_leaves_the_message_to_the_demo(tmp_path: Path) -> None:
    done = _run(tmp_path, "demo")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
