#!/usr/bin/env bash
# Installs the peer agents the benchmarks compare acpio against:
#   - benchmarks/.venv-peers: a separate virtualenv holding the official Python
#     ACP SDK (agent-client-protocol, protocol v1), so its dependencies
#     (pydantic, ...) never leak into acpio's environment;
#   - benchmarks/ts_agent/node_modules: the official TypeScript SDK, from the
#     committed package-lock.json.
# The measuring client, the floor agent and the acpio agent run in the project
# environment (python with acpio + msgspec) and need nothing from here.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
python="${PYTHON:-python3}"
official_sdk="${ACP_PY_SDK_VERSION:-0.12.1}"

if [ ! -x "$here/.venv-peers/bin/python" ]; then
  "$python" -m venv "$here/.venv-peers"
fi
"$here/.venv-peers/bin/python" -m pip install --quiet --disable-pip-version-check \
  "agent-client-protocol==$official_sdk"
"$here/.venv-peers/bin/python" -c "import acp; print('official python SDK', '$official_sdk', 'ok')"

if command -v npm >/dev/null 2>&1; then
  (cd "$here/ts_agent" && npm ci --no-audit --no-fund --loglevel=error)
  echo "typescript SDK: $(node -p "require('$here/ts_agent/node_modules/@agentclientprotocol/sdk/package.json').version") ok"
else
  echo "npm not found: the TypeScript peer agent will be reported as not available" >&2
fi
