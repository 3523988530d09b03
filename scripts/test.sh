#!/usr/bin/env bash
# Install everything the test suite needs into ./.venv, then run the static checks
# and the whole test suite (every async test runs on asyncio and on trio).
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k terminal -x`.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[dev]"
# The interoperability tests drive our example agents with real ACP clients (the official
# TypeScript SDK, acpx). `npm install` honours the lock file; `npm ci` refuses it because
# acpx's platform-specific optional packages for other systems are not on this registry.
(cd tests/interop && npm install --no-audit --no-fund --loglevel=error)

.venv/bin/python -m ruff check src tests examples benchmarks scripts
.venv/bin/python -m ruff format --check src tests examples benchmarks scripts
.venv/bin/python -m mypy
.venv/bin/pyright --pythonpath .venv/bin/python
# The documentation site (mkdocs.yml): a broken link, a page missing from the nav or a
# docstring the API reference cannot render fails the build.
site="$(mktemp -d)"
NO_MKDOCS_2_WARNING=1 .venv/bin/mkdocs build --strict --site-dir "$site"
rm -rf "$site"
.venv/bin/python -m pytest "$@"
