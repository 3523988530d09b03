#!/usr/bin/env bash
# Type completeness of the published package: `pyright --verifytypes acpio` on a
# non-editable install (an editable one hides the package from --verifytypes).
# Usage: scripts/verifytypes.sh [--outputjson]   (needs network-free pip: installs from
# this checkout; pyright's version is the one in the dev extra).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d "${TMPDIR:-/tmp}/acpio-verifytypes.XXXXXX")"
trap 'rm -rf "$work"' EXIT
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q "$root" "pyright==1.1.414"
mkdir "$work/run"
cd "$work/run"
# shellcheck disable=SC1091
. "$work/venv/bin/activate"
pyright --verifytypes acpio --ignoreexternal "$@"
