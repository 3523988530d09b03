#!/usr/bin/env bash
# Install acpio with its command-line extra into ./.venv and run `acpio demo`:
# the example shell and edit agents run as real subprocesses, driven by a
# scripted client that shows what an editor would display.
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[cli]"
exec .venv/bin/acpio demo "$@"
