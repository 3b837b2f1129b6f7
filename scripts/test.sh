#!/usr/bin/env bash
# The one command that runs every test:
#
#   scripts/test.sh [extra cargo test args...]
#
# 1. Makes sure the Python interop venv exists: <repo>/.venv with the official
#    A2A Python SDK from interop/python/requirements.txt (idempotent: reinstalls
#    only when requirements.txt changed). Skipped if FERRY_PYTHON is already set.
# 2. Exports FERRY_PYTHON (used by crates/ferry/tests/interop_python.rs and
#    crates/ferry/tests/interop_signing.rs).
# 2b. The same for the A2A v0.3 SDK: <repo>/.venv-v03 from
#    interop/python/requirements-v03.txt, exported as FERRY_PYTHON_V03 (used by
#    crates/ferry/tests/interop_v03.rs). Skipped if FERRY_PYTHON_V03 is already set.
# 2c. The same for the MCP Python SDK: <repo>/.venv-mcp from
#    interop/python/requirements-mcp.txt, exported as FERRY_PYTHON_MCP (used by
#    crates/ferry/tests/mcp_cli.rs). Skipped if FERRY_PYTHON_MCP is already set.
# 2d. The same for Google ADK: <repo>/.venv-adk from interop/python/requirements-adk.txt,
#    exported as FERRY_PYTHON_ADK (used by crates/ferry/tests/interop_adk.rs). Skipped if
#    FERRY_PYTHON_ADK is already set.
# 2e. Fetches the third-party form pages (scripts/third-party-forms.sh, npm demo pages) into
#    <repo>/target/third-party-forms, again only when the script changed, and exports
#    FERRY_THIRD_PARTY_FORMS (used by crates/ferry-forms/tests/it/third_party.rs). Skipped if
#    FERRY_THIRD_PARTY_FORMS is already set.
# 3. Runs `cargo test --workspace`.
#
# Environment:
#   FERRY_PYTHON=path   use this interpreter (must have a2a-sdk) instead of .venv
#   FERRY_PYTHON_V03=path  the same for a2a-sdk 0.3 instead of .venv-v03
#   FERRY_PYTHON_MCP=path  the same for the MCP SDK (mcp 2.3.0) instead of .venv-mcp
#   FERRY_PYTHON_ADK=path  the same for Google ADK (google-adk 2.13.0) instead of .venv-adk
#   FERRY_THIRD_PARTY_FORMS=dir  the third-party form pages, fetched already
#   PYTHON=python3.x    interpreter used to create .venv (default: python3.11, else python3)
#   CI=true             missing Python prerequisites fail the interop tests instead of skipping them
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Each heading says how long the script has run, so a slow step shows in the log.
section() { printf '\n==== %s ==== (%d s in)\n' "$*" "$SECONDS"; }

# ensure_venv DIR REQUIREMENTS: DIR is a venv with REQUIREMENTS installed (reinstalled only
# when the file changed since the last install).
ensure_venv() {
  local venv="$1" req="$2"
  local stamp="$venv/.ferry-requirements.sha256"
  local py="${PYTHON:-}"
  if [ -z "$py" ]; then
    if command -v python3.11 >/dev/null 2>&1; then py=python3.11; else py=python3; fi
  fi
  if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c 'import sys' >/dev/null 2>&1; then
    command -v "$py" >/dev/null 2>&1 || { echo "error: $py not found (need Python >= 3.10)" >&2; exit 1; }
    echo "creating $venv with $("$py" --version 2>&1)"
    rm -rf "$venv"
    if ! "$py" -m venv "$venv"; then
      echo "error: '$py -m venv' failed; on Debian install the venv module: apt-get install python3-venv" >&2
      exit 1
    fi
  fi
  local want
  want="$(sha256sum "$req" | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
    echo "installing $req"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$req"
    echo "$want" > "$stamp"
  else
    echo "up to date ($req unchanged)"
  fi
}

if [ -z "${FERRY_PYTHON:-}" ]; then
  section "python interop venv (.venv)"
  ensure_venv "$ROOT/.venv" "$ROOT/interop/python/requirements.txt"
  "$ROOT/.venv/bin/python" -c 'import importlib.metadata as m, a2a.client, a2a.utils.signing; print("a2a-sdk", m.version("a2a-sdk"), "PyJWT", m.version("PyJWT"))'
  export FERRY_PYTHON="$ROOT/.venv/bin/python"
else
  section "python interop: using FERRY_PYTHON=$FERRY_PYTHON"
fi

if [ -z "${FERRY_PYTHON_V03:-}" ]; then
  section "python v0.3 interop venv (.venv-v03)"
  ensure_venv "$ROOT/.venv-v03" "$ROOT/interop/python/requirements-v03.txt"
  "$ROOT/.venv-v03/bin/python" -c 'import importlib.metadata as m, a2a.client; print("a2a-sdk", m.version("a2a-sdk"))'
  export FERRY_PYTHON_V03="$ROOT/.venv-v03/bin/python"
else
  section "python v0.3 interop: using FERRY_PYTHON_V03=$FERRY_PYTHON_V03"
fi

if [ -z "${FERRY_PYTHON_MCP:-}" ]; then
  section "python MCP interop venv (.venv-mcp)"
  ensure_venv "$ROOT/.venv-mcp" "$ROOT/interop/python/requirements-mcp.txt"
  "$ROOT/.venv-mcp/bin/python" -c 'import importlib.metadata as m, mcp, mcp_types, httpx2; print("mcp", m.version("mcp"))'
  export FERRY_PYTHON_MCP="$ROOT/.venv-mcp/bin/python"
else
  section "python MCP interop: using FERRY_PYTHON_MCP=$FERRY_PYTHON_MCP"
fi

if [ -z "${FERRY_PYTHON_ADK:-}" ]; then
  section "python ADK interop venv (.venv-adk)"
  ensure_venv "$ROOT/.venv-adk" "$ROOT/interop/python/requirements-adk.txt"
  "$ROOT/.venv-adk/bin/python" -c 'import importlib.metadata as m, google.adk.agents.remote_a2a_agent; print("google-adk", m.version("google-adk"), "a2a-sdk", m.version("a2a-sdk"))'
  export FERRY_PYTHON_ADK="$ROOT/.venv-adk/bin/python"
else
  section "python ADK interop: using FERRY_PYTHON_ADK=$FERRY_PYTHON_ADK"
fi

if [ -z "${FERRY_THIRD_PARTY_FORMS:-}" ]; then
  section "third-party form pages (npm demo pages, target/third-party-forms)"
  pages="$ROOT/target/third-party-forms"
  stamp="$pages/.ferry-script.sha256"
  want="$(sha256sum "$ROOT/scripts/third-party-forms.sh" | cut -d' ' -f1)"
  if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
    rm -rf "$pages"
    "$ROOT/scripts/third-party-forms.sh" "$pages" > /dev/null
    echo "$want" > "$stamp"
  fi
  echo "up to date ($pages)"
  export FERRY_THIRD_PARTY_FORMS="$pages"
fi

section "cargo test --workspace"
cargo test --workspace "$@"

# The libraries without their optional bindings: a user who wants JSON-RPC and REST alone
# builds ferry-server and ferry-client without `grpc` and `v03`, and the server's own tests
# pass that way (the gRPC and v0.3 scenarios are left out).
section "cargo test -p ferry-server --no-default-features"
cargo test -p ferry-server --no-default-features "$@"
section "cargo check -p ferry-client --no-default-features"
cargo check -p ferry-client --no-default-features
