#!/usr/bin/env bash
# Type completeness of the published package: `pyright --verifytypes acpio` on a
# non-editable install (an editable one hides the package from --verifytypes). Fails
# (exit 1) unless every exported symbol has a known, unambiguous type (score 100%).
#
# The wheel of this checkout goes into a throwaway venv (no dependencies installed);
# a .pth file lends it the site-packages of the dev venv (./.venv, made by
# scripts/test.sh), so the adapters' frameworks resolve as an adapter's user has them,
# and pyright is the dev extra's. Nothing is fetched but the build backend.
# Usage: scripts/verifytypes.sh [--outputjson]   (--outputjson: pyright's JSON on stdout)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
dev="$root/.venv"
if [[ ! -x "$dev/bin/pyright" ]]; then
    echo "verifytypes: $dev with the dev extra is needed (bash scripts/test.sh makes it)" >&2
    exit 2
fi
json=false
for arg in "$@"; do
    case "$arg" in
    --outputjson) json=true ;;
    *) echo "verifytypes: unknown argument $arg" >&2 && exit 2 ;;
    esac
done
work="$(mktemp -d "${TMPDIR:-/tmp}/acpio-verifytypes.XXXXXX")"
trap 'rm -rf "$work"' EXIT
"$dev/bin/python" -m venv --without-pip "$work/venv"
purelib='import sysconfig; print(sysconfig.get_path("purelib"))'
site="$("$work/venv/bin/python" -c "$purelib")"
"$dev/bin/python" -c "$purelib" >"$site/acpio-dev-venv.pth"
"$dev/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-compile \
    --target "$site" "$root"
# pyright leaves out search paths under its working directory: run it beside the venv.
mkdir "$work/run"
cd "$work/run"
# shellcheck disable=SC1091
. "$work/venv/bin/activate"
"$dev/bin/pyright" --verifytypes acpio --ignoreexternal --outputjson >"$work/report.json" || true
if $json; then
    cat "$work/report.json"
fi
"$dev/bin/python" - "$work/report.json" "$site/acpio" <<'EOF'
"""Say what is incomplete and exit 1 unless the score is 100% of the installed package."""
import json
import sys

report = json.load(open(sys.argv[1], encoding="utf-8"))
completeness = report["typeCompleteness"]
counts = completeness["exportedSymbolCounts"]
out = sys.stderr
for diagnostic in report["generalDiagnostics"]:
    print(f"{diagnostic['severity']}: {diagnostic['message']}", file=out)
for symbol in completeness["symbols"]:
    if not symbol["isTypeKnown"] or symbol["isTypeAmbiguous"]:  # the root causes too
        messages = "; ".join(d["message"].replace("\n", " ") for d in symbol["diagnostics"])
        if messages:
            print(f"{symbol['name']}: {messages}", file=out)
score = completeness["completenessScore"]
print(
    f"type completeness of {completeness['packageRootDirectory'] or '(not found)'}: "
    f"{score:.2%} ({counts['withKnownType']} exported symbols known, "
    f"{counts['withAmbiguousType']} ambiguous, {counts['withUnknownType']} unknown)",
    file=out,
)
complete = (
    completeness["packageRootDirectory"] == sys.argv[2]
    and counts["withKnownType"] > 0
    and counts["withAmbiguousType"] == counts["withUnknownType"] == 0
    and score == 1
)
sys.exit(0 if complete else 1)
EOF
