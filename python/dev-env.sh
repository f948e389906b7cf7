#!/usr/bin/env bash
# A virtual environment with the Python package built in (editable: the Python files are used
# in place, the extension is rebuilt here). Used by ./test and CI; prints the interpreter's path.
#   COFLOWKIT_VENV   where the environment lives [target/venv, ignored by git]
#   COFLOWKIT_PROFILE cargo profile of the extension [release; `dev` builds faster and runs
#                     the simulators many times slower]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${COFLOWKIT_VENV:-target/venv}
profile=${COFLOWKIT_PROFILE:-release}
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv" >&2
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check -r python/requirements-dev.txt >&2
VIRTUAL_ENV="$PWD/$venv" PATH="$PWD/$venv/bin:$PATH" \
  "$venv/bin/maturin" develop --quiet --profile "$profile" -m python/Cargo.toml >&2
echo "$venv/bin/python"
