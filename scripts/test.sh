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
# 3. Runs `cargo test --workspace`.
#
# Environment:
#   FERRY_PYTHON=path   use this interpreter (must have a2a-sdk) instead of .venv
#   FERRY_PYTHON_V03=path  the same for a2a-sdk 0.3 instead of .venv-v03
#   PYTHON=python3.x    interpreter used to create .venv (default: python3.11, else python3)
#   CI=true             missing Python prerequisites fail the interop tests instead of skipping them
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

section() { printf '\n==== %s ====\n' "$*"; }

if [ -z "${FERRY_PYTHON:-}" ]; then
  section "python interop venv (.venv)"
  VENV="$ROOT/.venv"
  REQ="$ROOT/interop/python/requirements.txt"
  STAMP="$VENV/.ferry-requirements.sha256"
  PY="${PYTHON:-}"
  if [ -z "$PY" ]; then
    if command -v python3.11 >/dev/null 2>&1; then PY=python3.11; else PY=python3; fi
  fi
  if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
    command -v "$PY" >/dev/null 2>&1 || { echo "error: $PY not found (need Python >= 3.10)" >&2; exit 1; }
    echo "creating $VENV with $("$PY" --version 2>&1)"
    rm -rf "$VENV"
    if ! "$PY" -m venv "$VENV"; then
      echo "error: '$PY -m venv' failed; on Debian install the venv module: apt-get install python3-venv" >&2
      exit 1
    fi
  fi
  want="$(sha256sum "$REQ" | cut -d' ' -f1)"
  if [ "$(cat "$STAMP" 2>/dev/null || true)" != "$want" ]; then
    echo "installing $REQ"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQ"
    echo "$want" > "$STAMP"
  else
    echo "up to date ($REQ unchanged)"
  fi
  "$VENV/bin/python" -c 'import importlib.metadata as m, a2a.client, a2a.utils.signing; print("a2a-sdk", m.version("a2a-sdk"), "PyJWT", m.version("PyJWT"))'
  export FERRY_PYTHON="$VENV/bin/python"
else
  section "python interop: using FERRY_PYTHON=$FERRY_PYTHON"
fi

if [ -z "${FERRY_PYTHON_V03:-}" ]; then
  section "python v0.3 interop venv (.venv-v03)"
  VENV03="$ROOT/.venv-v03"
  REQ03="$ROOT/interop/python/requirements-v03.txt"
  STAMP03="$VENV03/.ferry-requirements.sha256"
  PY="${PYTHON:-}"
  if [ -z "$PY" ]; then
    if command -v python3.11 >/dev/null 2>&1; then PY=python3.11; else PY=python3; fi
  fi
  if [ ! -x "$VENV03/bin/python" ] || ! "$VENV03/bin/python" -c 'import sys' >/dev/null 2>&1; then
    echo "creating $VENV03 with $("$PY" --version 2>&1)"
    rm -rf "$VENV03"
    "$PY" -m venv "$VENV03"
  fi
  want="$(sha256sum "$REQ03" | cut -d' ' -f1)"
  if [ "$(cat "$STAMP03" 2>/dev/null || true)" != "$want" ]; then
    echo "installing $REQ03"
    "$VENV03/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQ03"
    echo "$want" > "$STAMP03"
  else
    echo "up to date ($REQ03 unchanged)"
  fi
  "$VENV03/bin/python" -c 'import importlib.metadata as m, a2a.client; print("a2a-sdk", m.version("a2a-sdk"))'
  export FERRY_PYTHON_V03="$VENV03/bin/python"
else
  section "python v0.3 interop: using FERRY_PYTHON_V03=$FERRY_PYTHON_V03"
fi

section "cargo test --workspace"
cargo test --workspace "$@"
