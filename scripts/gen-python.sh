#!/usr/bin/env bash
# Regenerates what the Python SDK (sdk/python) generates from the API's
# contract: its wire types, paddock/models.py from api/openapi.yaml, and the
# clients' type stubs, paddock/client.pyi and paddock/aio.pyi, from the
# operations written once in paddock/_operations.py.
#
#   scripts/gen-python.sh          regenerate in place
#   scripts/gen-python.sh OUTDIR   write the three files to OUTDIR instead
#                                  (used by the test that checks the
#                                  committed ones, sdk/python/gen_test.go)
#
# Tools: sdk/python/gen/gen_models.py and gen_stubs.py, run offline by
# Debian's python3 with its PyYAML (python3-yaml); PADDOCK_PYTHON names
# another interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."

python="${PADDOCK_PYTHON:-/usr/bin/python3}"
out="${1:-sdk/python/paddock}"
"$python" sdk/python/gen/gen_models.py api/openapi.yaml "$out/models.py"
"$python" sdk/python/gen/gen_stubs.py sdk/python/paddock "$out"
