#!/usr/bin/env bash
# Sets up a fresh machine (Tools/setup.sh) and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
Tools/setup.sh
# Every module a target imports must be a dependency Package.swift declares for it.
swift build --build-tests --explicit-target-dependency-import-check error
swift test --skip-build --disable-xctest "$@"
