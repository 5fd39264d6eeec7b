"""The compiled domain is used only while it matches its sources, and says why when it is not."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import asdict
from pathlib import Path

import pytest

import dashboard.domain.rollout_view
from dashboard import compiled
from dashboard.compiled import Build, CompiledError, compiled_sources, install, is_compiled, mode

ROOT = Path(__file__).resolve().parent.parent

# A project of small typed modules, laid out where compiled_sources() looks.
SMALL_PROJECT = {
    "dashboard/domain/__init__.py": "",
    "dashboard/domain/sums.py": "def total(values: list[int]) -> int:\n    return sum(values)\n",
    "dashboard/actions/__init__.py": "",
    "dashboard/actions/plans.py": "from dashboard.domain.sums import total\n\nPLANNED = total([1, 2])\n",
    "dashboard/actions/availability.py": "def available() -> bool:\n    return True\n",
    "dashboard/kube/__init__.py": "",
    "dashboard/kube/cache.py": "KEPT: dict[str, bytes] = {}\n",
    "dashboard/kube/fingerprint.py": "SIZE = 16\n",
    "dashboard/jsontext.py": "def exact(data: bytes) -> bytes:\n    return bytes(data)\n",
}


def small_project(root: Path) -> Path:
    for name, text in SMALL_PROJECT.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def manifest_for(root: Path, build_dir: Path, suffix: str = compiled.EXTENSION_SUFFIX) -> Build:
    sources = {str(path): compiled.source_digest(root / path) for path in compiled_sources(root)}
    build = Build(files={}, sources=sources, suffix=suffix, compiler=compiled.compiler_version())
    build_dir.mkdir(exist_ok=True)
    (build_dir / compiled.MANIFEST).write_text(json.dumps(asdict(build)))
    return build


def test_it_compiles_the_domain_and_the_watchers_work_per_change_but_not_what_mypyc_cannot_keep() -> None:
    names = {str(path) for path in compiled_sources()}
    assert {"dashboard/domain/rollout_view.py", "dashboard/domain/rs_roles.py"} <= names
    assert {"dashboard/actions/plans.py", "dashboard/actions/availability.py"} <= names
    assert {"dashboard/kube/cache.py", "dashboard/kube/fingerprint.py"} <= names
    assert "dashboard/domain/flagger/view.py" in names
    assert "dashboard/domain/analysis.py" not in names  # subclasses str
    assert "dashboard/domain/analysis_eval.py" not in names  # sets attributes on closures
    assert not [name for name in names if "/findings/" in name]  # faster interpreted (compiled.py)
    assert not [name for name in names if name.endswith("__init__.py")]


def test_a_build_of_the_same_sources_is_current(tmp_path: Path) -> None:
    build = manifest_for(small_project(tmp_path), tmp_path / "compiled")
    assert build.problem(tmp_path) is None


def test_an_edited_source_makes_the_build_stale_naming_the_file(tmp_path: Path) -> None:
    build = manifest_for(small_project(tmp_path), tmp_path / "compiled")
    (tmp_path / "dashboard/domain/sums.py").write_text("def total(values: list[int]) -> int:\n    return 0\n")
    assert build.problem(tmp_path) == "dashboard/domain/sums.py has changed since it was compiled"


def test_a_new_source_makes_the_build_stale(tmp_path: Path) -> None:
    build = manifest_for(small_project(tmp_path), tmp_path / "compiled")
    (tmp_path / "dashboard/domain/more.py").write_text("X = 1\n")
    assert build.problem(tmp_path) == "the set of compiled sources has changed"


def test_a_build_for_another_python_is_not_used(tmp_path: Path) -> None:
    other = ".cpython-312-x86_64-linux-gnu.so"
    build = manifest_for(small_project(tmp_path), tmp_path / "compiled", suffix=other)
    assert build.problem(tmp_path) == f"it was built for another Python ({other})"


def test_require_without_a_build_stops_the_process_naming_the_fix(tmp_path: Path) -> None:
    expected = r"DOMAIN_COMPILED=require, but there is no build \(run `make compile`\)"
    with pytest.raises(CompiledError, match=expected):
        install(small_project(tmp_path), tmp_path / "compiled", chosen="require")


def test_require_with_a_stale_build_stops_the_process_naming_the_file(tmp_path: Path) -> None:
    manifest_for(small_project(tmp_path), tmp_path / "compiled")
    (tmp_path / "dashboard/actions/plans.py").write_text("PLANNED = 0\n")
    with pytest.raises(CompiledError, match=r"dashboard/actions/plans\.py has changed since it was compiled"):
        install(tmp_path, tmp_path / "compiled", chosen="require")


def test_auto_with_a_stale_build_warns_and_runs_the_sources(tmp_path: Path) -> None:
    manifest_for(small_project(tmp_path), tmp_path / "compiled")
    (tmp_path / "dashboard/actions/plans.py").write_text("PLANNED = 0\n")
    with pytest.warns(UserWarning, match=r"not used: dashboard/actions/plans\.py has changed"):
        assert install(tmp_path, tmp_path / "compiled", chosen="auto") is False


def test_auto_without_a_build_runs_the_sources_quietly(
    tmp_path: Path, recwarn: pytest.WarningsRecorder
) -> None:
    assert install(small_project(tmp_path), tmp_path / "compiled", chosen="auto") is False
    assert not recwarn.list


def test_an_unreadable_manifest_is_named(tmp_path: Path) -> None:
    (tmp_path / "compiled").mkdir()
    (tmp_path / "compiled" / compiled.MANIFEST).write_text("{not json")
    with pytest.raises(CompiledError, match=r"compiled/manifest.json is unreadable .*; run `make compile`"):
        install(small_project(tmp_path), tmp_path / "compiled", chosen="require")
    with pytest.warns(UserWarning, match=r"manifest\.json is unreadable"):
        assert install(tmp_path, tmp_path / "compiled", chosen="auto") is False


def test_off_never_reads_the_build(tmp_path: Path) -> None:
    (tmp_path / "compiled").mkdir()
    (tmp_path / "compiled" / compiled.MANIFEST).write_text("{not json")
    assert install(small_project(tmp_path), tmp_path / "compiled", chosen="off") is False


def test_the_mode_is_read_from_the_environment_and_a_bad_one_is_named() -> None:
    assert mode({}) == "auto"
    assert mode({"DOMAIN_COMPILED": " Require "}) == "require"
    with pytest.raises(CompiledError, match="DOMAIN_COMPILED must be one of auto, off, require, not 'yes'"):
        mode({"DOMAIN_COMPILED": "yes"})


def test_this_suite_runs_the_domain_as_it_was_asked_to() -> None:
    """`make test` asks for the compiled domain, then for the sources: each run proves which it had."""
    chosen = mode()
    if chosen == "require":
        assert is_compiled(dashboard.domain.rollout_view)
    elif chosen == "off":
        assert not is_compiled(dashboard.domain.rollout_view)


@pytest.mark.slow
def test_a_real_build_loads_compiled_until_a_source_changes(tmp_path: Path) -> None:
    """mypyc builds the small project; each process then loads it, or the sources once one is edited."""
    root = small_project(tmp_path)
    shutil.copy(ROOT / "dashboard/__init__.py", root / "dashboard/__init__.py")
    shutil.copy(ROOT / "dashboard/compiled.py", root / "dashboard/compiled.py")
    environ = {**os.environ, "PYTHONPATH": str(root), "DOMAIN_COMPILED": "off"}
    python = [sys.executable, "-c"]
    build = [*python, "from dashboard.compiled import build; build()"]
    subprocess.run(build, cwd=root, env=environ, check=True, capture_output=True, timeout=240)
    probe = textwrap.dedent(
        """
        import dashboard.actions.plans as plans
        from dashboard.compiled import is_compiled
        print(is_compiled(plans), plans.PLANNED)
        """
    )

    def run(chosen: str) -> subprocess.CompletedProcess[str]:
        environ["DOMAIN_COMPILED"] = chosen
        command = [*python, probe]
        return subprocess.run(command, cwd=root, env=environ, capture_output=True, text=True, timeout=60)

    assert run("require").stdout == "True 3\n"
    assert run("off").stdout == "False 3\n"

    (root / "dashboard/domain/sums.py").write_text("def total(values: list[int]) -> int:\n    return 7\n")
    stale = run("auto")
    assert stale.stdout == "False 7\n"  # the edit runs, not the stale build
    assert "dashboard/domain/sums.py has changed since it was compiled" in stale.stderr
    refused = run("require")
    assert refused.returncode != 0
    assert "DOMAIN_COMPILED=require, but dashboard/domain/sums.py has changed" in refused.stderr


def test_a_mypy_whose_mypyc_leaks_is_refused_by_name() -> None:
    assert compiled.compiler_problem("1.20.2") == (
        "mypy 1.20.2 compiles code that leaks memory (mypyc/mypyc#1192); install 2.0 or later"
    )
    assert compiled.compiler_problem("2.3.1") is None
    assert compiled.compiler_problem("") == "mypy is not installed (pip install '.[compile]')"


def test_a_build_by_another_mypy_is_compiled_again(tmp_path: Path) -> None:
    build = manifest_for(small_project(tmp_path), tmp_path / "compiled")
    assert compiled.rebuild_reason(tmp_path, tmp_path / "compiled") is None
    older = {**asdict(build), "compiler": "2.0.0"}
    (tmp_path / "compiled" / compiled.MANIFEST).write_text(json.dumps(older))
    installed = compiled.compiler_version()
    assert compiled.rebuild_reason(tmp_path, tmp_path / "compiled") == (
        f"it was compiled by mypy 2.0.0; mypy {installed} is installed"
    )


def test_a_manifest_from_before_the_compiler_was_recorded_is_compiled_again(tmp_path: Path) -> None:
    build = manifest_for(small_project(tmp_path), tmp_path / "compiled")
    unrecorded = {key: value for key, value in asdict(build).items() if key != "compiler"}
    (tmp_path / "compiled" / compiled.MANIFEST).write_text(json.dumps(unrecorded))
    reason = compiled.rebuild_reason(tmp_path, tmp_path / "compiled")
    assert reason is not None and reason.startswith("it was compiled by mypy (not recorded)")
