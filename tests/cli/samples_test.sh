#!/usr/bin/env bash
# The committed samples/ are exactly what the current pe writes.
# Usage: samples_test.sh PE_BIN SCRATCH_DIR
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
if bash "$here/scripts/make-samples.sh" "$1" --check; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; exit 1; fi
