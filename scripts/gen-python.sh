#!/usr/bin/env bash
# Regenerates the Python SDK's wire types (sdk/python/paddock/models.py) from
# api/openapi.yaml, the one source of the HTTP contract.
#
#   scripts/gen-python.sh            regenerate in place
#   scripts/gen-python.sh OUTFILE    write the file to OUTFILE instead (used
#                                    by the test that checks the committed
#                                    file, sdk/python/gen_test.go)
#
# Tool: sdk/python/gen/gen_models.py, run offline by Debian's python3 with
# its PyYAML (python3-yaml); PADDOCK_PYTHON names another interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."

python="${PADDOCK_PYTHON:-/usr/bin/python3}"
out="${1:-sdk/python/paddock/models.py}"
exec "$python" sdk/python/gen/gen_models.py api/openapi.yaml "$out"
