#!/usr/bin/env bash
# Sets up a fresh machine (Tools/setup.sh) and runs the whole test suite, then the example server's
# (Tools/ExampleServer). Arguments go to the main suite's `swift test` and skip the example's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
Tools/setup.sh
# Every module a target imports must be a dependency Package.swift declares for it.
swift build --build-tests --explicit-target-dependency-import-check error
swift test --skip-build --disable-xctest "$@"
# The example server (a package of its own) and its tests, unless only some of the tests above were asked for.
if [ $# -eq 0 ]; then
    swift build --package-path Tools/ExampleServer --build-tests
    swift test --package-path Tools/ExampleServer --skip-build --disable-xctest
fi
