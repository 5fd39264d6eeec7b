"""The domain and the watcher's cache compiled with mypyc, loaded only while they match their sources.

Building views and keeping the objects they are built from are most of the watcher's work per change;
compiled, a rebuild costs about a quarter less and the watcher about a tenth less CPU (docs/benchmarks.md,
"Twenty-third session" and "Twenty-fourth session"). ``scripts/compile.py`` (``make compile``) compiles the
modules named by ``compiled_sources()`` into ``compiled/`` with a manifest of their sources' SHA-256 and of
the mypy that compiled them. ``install()``, run when the ``dashboard`` package is imported, puts a finder
ahead of the source finders that loads them, and only when every compiled source is unchanged (hashing them
all takes about 1 ms): compiled modules call each other directly rather than through the import system, so
one edited file keeps the whole group interpreted.

``DOMAIN_COMPILED`` chooses: ``auto`` (the default: compiled when current, the sources otherwise, with a
warning when the build is stale), ``off``, or ``require`` (CI and the image: a missing or stale build stops
the process at start-up).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
BUILD_DIR = ROOT / "compiled"
MANIFEST = "manifest.json"
GROUP = "rollouts_ui_domain"
MODES = ("auto", "off", "require")
EXTENSION_SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]  # .cpython-311-x86_64-linux-gnu.so here
# mypy 1.x's mypyc leaked the left side of every ``bytes + bytes`` (mypyc/mypyc#1192): a watcher built
# with it grew by 6.6 KB per fingerprint and kept growing (tests/kube/test_watcher_memory.py).
OLDEST_COMPILER = (2, 0)

# Compiled: the domain, and what the watcher runs for every change beyond it (the cache of objects, their
# fingerprints, the action plans of its view). Left interpreted: analysis.py subclasses str, which a
# compiled class cannot; analysis_eval.py sets attributes on nested functions, which compiled closures do
# not keep; the packages' __init__ modules mostly gather their parts. The findings too: their Context caches
# its facts with cached_property, which needs a non-native class, and compiled code reaches such a class's
# attributes more slowly than the interpreter does (bench_builds: findings 89 µs a rollout compiled, 64
# interpreted over the compiled domain). Everything compiled is typed and mypy-clean.
_INTERPRETED = {Path("dashboard/domain/analysis.py"), Path("dashboard/domain/analysis_eval.py")}
_BEYOND_THE_DOMAIN = tuple(
    Path(path)
    for path in (
        "dashboard/actions/plans.py",
        "dashboard/actions/availability.py",
        "dashboard/kube/cache.py",
        "dashboard/kube/fingerprint.py",
        "dashboard/jsontext.py",
    )
)


class CompiledError(RuntimeError):
    """The compiled modules cannot be used; the message says why."""


class NoBuild(CompiledError):
    """Nothing was compiled: the sources run."""


def compiled_sources(root: Path = ROOT) -> list[Path]:
    """The sources compiled, relative to ``root``: the domain and the watcher's work per change."""
    domain = [path.relative_to(root) for path in sorted((root / "dashboard" / "domain").rglob("*.py"))]
    chosen = [
        path
        for path in domain
        if path.name != "__init__.py" and path not in _INTERPRETED and path.parent.name != "findings"
    ]
    return [*chosen, *_BEYOND_THE_DOMAIN]


def module_name(source: Path) -> str:
    return ".".join(source.with_suffix("").parts)


def source_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@dataclass(frozen=True)
class Build:
    """What ``compiled/manifest.json`` says: each compiled module's file, and its source's digest."""

    files: dict[str, str]  # module name → extension file, relative to the build directory
    sources: dict[str, str]  # source path, relative to the project → SHA-256 when compiled
    suffix: str  # the extension suffix of the Python that built it
    compiler: str = ""  # the version of mypy that compiled it ("" in a manifest from before it was kept)

    def problem(self, root: Path) -> str | None:
        """Why this build must not be loaded for the sources under ``root``, or None when it is current."""
        if self.suffix != EXTENSION_SUFFIX:
            return f"it was built for another Python ({self.suffix})"
        expected = {str(path): path for path in compiled_sources(root)}
        if set(expected) != set(self.sources):
            return "the set of compiled sources has changed"
        for name, path in expected.items():
            if not (root / path).is_file() or source_digest(root / path) != self.sources[name]:
                return f"{name} has changed since it was compiled"
        return None


def read_build(build_dir: Path) -> Build | None:
    try:
        data = json.loads((build_dir / MANIFEST).read_text())
        return Build(
            files=dict(data["files"]),
            sources=dict(data["sources"]),
            suffix=str(data["suffix"]),
            compiler=str(data.get("compiler", "")),
        )
    except FileNotFoundError:
        return None
    except (ValueError, KeyError, TypeError) as error:
        raise CompiledError(f"{build_dir / MANIFEST} is unreadable ({error}); run `make compile`") from error


class _CompiledFinder(importlib.abc.MetaPathFinder):
    """Finds the compiled modules of one current build, ahead of the finders of their sources."""

    def __init__(self, build_dir: Path, files: dict[str, str]) -> None:
        self.build_dir = build_dir
        self.files = files

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        file = self.files.get(fullname)
        if file is None:
            return None
        location = str(self.build_dir / file)
        loader = importlib.machinery.ExtensionFileLoader(fullname, location)
        return importlib.util.spec_from_file_location(fullname, location, loader=loader)


def mode(environ: Mapping[str, str] = os.environ) -> str:
    chosen = environ.get("DOMAIN_COMPILED", "auto").strip().lower() or "auto"
    if chosen not in MODES:
        raise CompiledError(f"DOMAIN_COMPILED must be one of {', '.join(MODES)}, not {chosen!r}")
    return chosen


def current_build(root: Path = ROOT, build_dir: Path = BUILD_DIR) -> Build:
    """The build in ``build_dir`` if it matches the sources under ``root``; CompiledError saying why not."""
    build = read_build(build_dir)
    if build is None:
        raise NoBuild("there is no build (run `make compile`)")
    problem = build.problem(root)
    if problem is not None:
        raise CompiledError(f"{problem}; run `make compile`")
    return build


def install(root: Path = ROOT, build_dir: Path = BUILD_DIR, chosen: str | None = None) -> bool:
    """Load the compiled modules from now on if the build is current; whether they will be."""
    chosen = chosen or mode()
    if chosen == "off":
        return False
    try:
        build = current_build(root, build_dir)
    except CompiledError as error:
        if chosen == "require":
            raise CompiledError(f"DOMAIN_COMPILED=require, but {error}") from None
        if not isinstance(error, NoBuild):  # no build at all is the ordinary interpreted set-up
            warnings.warn(f"the compiled domain is not used: {error}", stacklevel=2)
        return False
    installed = (f for f in sys.meta_path if isinstance(f, _CompiledFinder) and f.build_dir == build_dir)
    if next(installed, None) is None:
        already = sorted(name for name in build.files if name in sys.modules)
        if already:  # loading the rest compiled would mix two copies of the group
            raise CompiledError(f"the compiled domain comes too late: {', '.join(already)} already imported")
        sys.meta_path.insert(0, _CompiledFinder(build_dir, build.files))
    return True


def running() -> str:
    """How this process runs the domain, "compiled" or "sources": each benchmark report says which."""
    return "compiled" if any(isinstance(f, _CompiledFinder) for f in sys.meta_path) else "sources"


def is_compiled(module: ModuleType) -> bool:
    return isinstance(module.__spec__ and module.__spec__.loader, importlib.machinery.ExtensionFileLoader)


def compiler_version() -> str:
    """The installed mypy's version, which ``build`` compiles with ("" without mypy: an image's runtime)."""
    try:
        return importlib.metadata.version("mypy")
    except importlib.metadata.PackageNotFoundError:
        return ""


def compiler_problem(version: str) -> str | None:
    """Why mypy ``version`` must not compile the domain, or None."""
    if not version:
        return "mypy is not installed (pip install '.[compile]')"
    numbers = tuple(int(part) if part.isdigit() else 0 for part in version.split(".")[:2])
    if numbers < OLDEST_COMPILER:
        oldest = ".".join(map(str, OLDEST_COMPILER))
        return f"mypy {version} compiles code that leaks memory (mypyc/mypyc#1192); install {oldest} or later"
    return None


def rebuild_reason(root: Path = ROOT, build_dir: Path = BUILD_DIR) -> str | None:
    """Why ``make compile`` must build again, or None when the build matches the sources and was compiled
    by the mypy installed now (another mypy may compile the same sources differently)."""
    try:
        build = current_build(root, build_dir)
    except CompiledError as error:
        return str(error)
    installed = compiler_version()
    if build.compiler != installed:
        return f"it was compiled by mypy {build.compiler or '(not recorded)'}; mypy {installed} is installed"
    return None


def build(root: Path = ROOT, build_dir: Path = BUILD_DIR) -> Build:
    """Compile ``compiled_sources()`` into ``build_dir``, replacing what was there, and write its manifest."""
    compiler = compiler_version()
    problem = compiler_problem(compiler)
    if problem is not None:
        raise CompiledError(problem)
    from mypyc.build import mypycify  # the build's own dependencies: mypy (dev) and setuptools
    from setuptools import Distribution

    sources = compiled_sources(root)
    # Read before compiling: a source edited meanwhile leaves the build stale, never current with other code.
    digests = {str(path): source_digest(root / path) for path in sources}
    # The compiled modules import nothing of Django, so mypy runs without the project's configuration (its
    # Django plugin would need the settings and Django's stubs).
    options = ["--config-file", "", "--python-version", "3.11", "--ignore-missing-imports"]
    with tempfile.TemporaryDirectory(prefix="mypyc-") as scratch:
        work = Path(scratch)
        with contextlib.chdir(root):  # mypyc names each module by its path from here
            extensions = mypycify(
                [*options, *map(str, sources)], opt_level="3", group_name=GROUP, target_dir=str(work / "c")
            )
            distribution = Distribution({"name": "rollouts-ui-compiled", "ext_modules": extensions})
            command = distribution.get_command_obj("build_ext")
            command.build_lib = str(work / "lib")
            command.build_temp = str(work / "tmp")
            distribution.run_command("build_ext")
        compiled = Build(
            files=_extension_files(work / "lib"), sources=digests, suffix=EXTENSION_SUFFIX, compiler=compiler
        )
        missing = {module_name(path) for path in sources} - set(compiled.files)
        if missing:
            raise CompiledError(f"mypyc built no module for {', '.join(sorted(missing))}")
        (work / "lib" / MANIFEST).write_text(json.dumps(asdict(compiled), indent=1, sort_keys=True) + "\n")
        staged = build_dir.with_name(build_dir.name + ".new")  # replaced whole: no mix of two builds
        shutil.rmtree(staged, ignore_errors=True)
        shutil.copytree(work / "lib", staged)
        shutil.rmtree(build_dir, ignore_errors=True)
        staged.rename(build_dir)
    return compiled


def _extension_files(lib: Path) -> dict[str, str]:
    """Each extension module under ``lib`` by its module name: the modules and the group's shared library."""
    files = (path.relative_to(lib) for path in lib.rglob(f"*{EXTENSION_SUFFIX}"))
    return {".".join(path.parts).removesuffix(EXTENSION_SUFFIX): str(path) for path in files}
