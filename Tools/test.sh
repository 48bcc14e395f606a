#!/usr/bin/env bash
# Sets up a fresh machine (Tools/setup.sh) and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
Tools/setup.sh
swift build --build-tests
swift test --skip-build --disable-xctest "$@"
