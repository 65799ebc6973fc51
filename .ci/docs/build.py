"""Build the documentation site with warnings as errors: ``python .ci/docs/build.py [SITE_DIR]``.

Runs ``mkdocs build --strict`` on the repository's mkdocs.yml (pages in ``docs/``, the API
reference from the docstrings, the command-line page from the parser: .ci/docs/hooks.py)
into SITE_DIR (default: a temporary folder, removed afterwards). Nothing is fetched from
the network. Needs the ``docs`` extra (``pip install -e ".[docs]"``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def build(site: Path, config: Path = ROOT / "mkdocs.yml") -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of ``config`` into ``site``."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's notice about MkDocs 2
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config), "--site-dir", str(site)],
        capture_output=True, text=True, env=env, cwd=ROOT,
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("site", nargs="?", help="where to write the site (default: a temporary folder)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(args.site).resolve() if args.site else Path(tmp) / "site"
        start = time.perf_counter()
        run = build(site)
        sys.stderr.write(run.stdout + run.stderr)
        if run.returncode == 0:
            where = f"in {site}" if args.site else "in a temporary folder, removed (give a folder to keep it: build.py DIR)"
            print(f"site built {where} in {time.perf_counter() - start:.1f} s")
        return run.returncode


if __name__ == "__main__":
    sys.exit(main())
