"""Compile the domain with mypyc into compiled/ (``make compile``; see dashboard/compiled.py).

    python scripts/compile.py           build compiled/ unless it matches the sources and mypy already
    python scripts/compile.py --force   build it anyway
    python scripts/compile.py clean     remove it: every process runs the sources
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

os.environ["DOMAIN_COMPILED"] = "off"  # the build being replaced must not load while this runs
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dashboard.compiled import BUILD_DIR, ROOT, CompiledError, build, rebuild_reason


def main(argv: list[str]) -> int:
    where = f"{BUILD_DIR.relative_to(ROOT)}/"
    if argv == ["clean"]:
        shutil.rmtree(BUILD_DIR, ignore_errors=True)
        print(f"removed {where}")
        return 0
    if argv not in ([], ["--force"]):
        print(__doc__, file=sys.stderr)
        return 2
    if not argv and rebuild_reason() is None:
        print(f"{where} matches the sources")
        return 0
    try:
        compiled = build()
    except CompiledError as error:
        print(f"cannot compile: {error}", file=sys.stderr)
        return 1
    print(f"compiled {len(compiled.sources)} modules into {where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
