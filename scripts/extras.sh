#!/usr/bin/env bash
# Every extra installs and works alone. The test suite runs with every extra installed at
# once (the dev extra), where a dependency one extra forgot can come with another; here each
# extra gets a fresh virtual environment with only `pip install "acpio[EXTRA]"` (this checkout
# built once as a wheel, installed as a user's pip would install it from an index), then its
# modules are imported and its example runs for real. Any failure stops the script.
# Usage: bash scripts/extras.sh [EXTRA...]   (default: core and every extra in EXTRAS)
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
helpers="$root/scripts/extras"

# To add an extra: name it here, list its modules in MODULES, and write check_<name>
# (dashes become underscores) that runs its example with "$venv/bin/python".
EXTRAS=(core cli testing mcp pydantic-ai langgraph remote postgres otel)
declare -A MODULES=(
  # NAME.* imports a package and every module in it (but __main__); several extras share
  # acpio.adapters: name their own modules, not the package.
  [core]="acpio acpio.rpc acpio.store acpio.schema.* acpio.permission"
  [cli]="acpio._cli.*"
  [testing]="acpio.testing.*"
  [mcp]="acpio.mcp"
  [pydantic-ai]="acpio.adapters.pydantic_ai"
  [langgraph]="acpio.adapters.langgraph"
  [remote]="acpio.remote.*"
  [postgres]="acpio._store.postgres_store"
  [otel]="acpio._agent.otel"
)

work="$(mktemp -d "${TMPDIR:-/tmp}/acpio-extras.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# pip keeps its own cache; the agents and tests run here keep their state in $work only.
PIP_CACHE_DIR="$(python3 -m pip cache dir)"
export PIP_CACHE_DIR PIP_DISABLE_PIP_VERSION_CHECK=1
export XDG_STATE_HOME="$work/home/state" XDG_CONFIG_HOME="$work/home/config"
export XDG_CACHE_HOME="$work/home/cache" XDG_DATA_HOME="$work/home/data"
export ACPIO_STATE_DIR="$work/home/acpio-state"

# The example files, copied: each check runs what a user would have, never the checkout's src/.
mkdir -p "$work/examples" && cp "$root"/examples/*.py "$helpers"/*.py "$work/examples/"
lines="$work/examples/acp_lines.py"

python3 -m pip wheel --quiet --no-deps --wheel-dir "$work/dist" "$root"
wheel="$(echo "$work"/dist/acpio-*.whl)"

check_core() {
  for protocol in 2 1; do
    "$venv/bin/python" "$lines" --protocol "$protocol" --prompt "hello, core" \
      --expect "hello, core" -- "$venv/bin/python" "$work/examples/echo_agent.py"
  done
}

check_cli() {
  "$venv/bin/acpio" check -- "$venv/bin/python" "$work/examples/echo_agent.py"
  "$venv/bin/acpio" demo --examples "$work/examples"
}

check_testing() {
  (cd "$work/examples" && "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    -W error test_kit.py test_examples.py)
}

check_mcp() {
  local server="calc=$venv/bin/python $work/examples/mcp_server.py"
  for protocol in 2 1; do
    "$venv/bin/python" "$lines" --protocol "$protocol" --mcp-stdio "$server" \
      --prompt "add 2 40" --expect "calc.add says 42" \
      -- "$venv/bin/python" "$work/examples/mcp_agent.py"
  done
}

check_pydantic_ai() {
  for protocol in 2 1; do
    "$venv/bin/python" "$lines" --protocol "$protocol" \
      --prompt "plan" --expect "plan is shown" \
      --prompt "read notes.txt" --expect "The notes of the extras check." \
      --prompt "run echo hi-there" --expect "hi-there" \
      -- "$venv/bin/python" "$work/examples/pydantic_ai_agent.py"
  done
}

check_langgraph() {
  for protocol in 2 1; do
    "$venv/bin/python" "$lines" --protocol "$protocol" \
      --prompt "read notes.txt" --expect "The notes of the extras check." \
      --prompt "hello, graph" --expect "hello, graph" \
      -- "$venv/bin/python" "$work/examples/langgraph_agent.py"
  done
}

check_remote() {
  local port
  port="$("$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  "$venv/bin/acpio" serve --listen "127.0.0.1:$port" --store memory \
    "$work/examples/echo_agent.py:EchoAgent" &
  local server=$!
  local status=0
  "$venv/bin/python" "$work/examples/remote_probe.py" "$port" || status=$?
  kill -TERM "$server" && wait "$server" || true
  return "$status"
}

check_postgres() {
  # A private PostgreSQL on loopback (as the postgres user when run as root); the echo agent
  # keeps its sessions there (ACPIO_SESSION_STORE), over v2 and v1.
  # Its own directory: the postgres user cannot enter $work (0700, root's).
  local initdb pg_ctl port pg url status=0
  local as_user=()
  initdb="$(command -v initdb || ls /usr/lib/postgresql/*/bin/initdb | tail -n 1)"
  pg_ctl="$(dirname "$initdb")/pg_ctl"
  pg="$(mktemp -d "${TMPDIR:-/tmp}/acpio-extras-pg.XXXXXX")"
  if [ "$(id -u)" = 0 ]; then chown postgres "$pg"; as_user=(runuser -u postgres --); fi
  port="$("$venv/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
  "${as_user[@]}" "$initdb" -D "$pg/data" -A trust -U acpio >/dev/null
  "${as_user[@]}" "$pg_ctl" -D "$pg/data" -l "$pg/log" -w \
    -o "-p $port -k $pg -c listen_addresses=127.0.0.1" start >/dev/null
  url="postgresql://acpio@127.0.0.1:$port/postgres"
  for protocol in 2 1; do
    ACPIO_SESSION_STORE="$url" "$venv/bin/python" "$lines" --protocol "$protocol" \
      --prompt "hello, postgres" --expect "hello, postgres" \
      -- "$venv/bin/python" "$work/examples/echo_agent.py" || status=$?
  done
  [ "$status" != 0 ] || "$venv/bin/python" "$work/examples/pg_sessions.py" "$url" 2 || status=$?
  "${as_user[@]}" "$pg_ctl" -D "$pg/data" -m fast -w stop >/dev/null || true
  rm -rf "$pg"
  return "$status"
}

check_otel() {
  # The traced example against a receiver on loopback (the standard OpenTelemetry
  # environment), over v2 and v1; its turn, tool call and permission wait arrive as spans.
  for protocol in 2 1; do
    "$venv/bin/python" "$work/examples/otlp_check.py" --protocol "$protocol" \
      -- "$venv/bin/python" "$work/examples/traced_agent.py"
  done
}

import_all() {
  "$venv/bin/python" - "$@" <<'EOF'
import importlib
import pkgutil
import sys

for name in sys.argv[1:]:
    package = name.removesuffix(".*")
    module = importlib.import_module(package)
    if name != package:
        for info in pkgutil.walk_packages(module.__path__, package + "."):
            if not info.name.endswith(".__main__"):
                importlib.import_module(info.name)
    print(f"  imported {name}")
EOF
}

selected=("$@")
[ ${#selected[@]} -gt 0 ] || selected=("${EXTRAS[@]}")
for extra in "${selected[@]}"; do
  [ -n "${MODULES[$extra]+set}" ] || { echo "extras.sh: unknown extra $extra" >&2; exit 2; }
  started=$SECONDS
  echo "== acpio[$extra]: a fresh venv with only this extra"
  venv="$work/venv-$extra"
  python3 -m venv "$venv"
  if [ "$extra" = core ]; then requirement="acpio @ file://$wheel"
  else requirement="acpio[$extra] @ file://$wheel"; fi
  "$venv/bin/python" -m pip install --quiet "$requirement"
  # shellcheck disable=SC2086  # MODULES holds a space-separated list
  import_all ${MODULES[$extra]}
  "check_${extra//-/_}"
  echo "== acpio[$extra]: ok ($((SECONDS - started))s)"
  rm -rf "$venv"
done
echo "extras.sh: every extra installs and works alone (${selected[*]})"
