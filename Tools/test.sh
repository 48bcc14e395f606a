#!/usr/bin/env bash
# Sets up a fresh machine (Tools/setup.sh) and runs the whole test suite, then the example server's
# (Tools/ExampleServer). Arguments go to the main suite's `swift test` and skip the example's tests.
#
# The suite is built optimized, with testing enabled, in a build directory of its own (.build-tests, so that
# it does not undo the demo's release build in .build/release): built for debugging, the encryption and the
# tool's argument parsing alone make the suite several times slower. At most two tests per core run at once:
# Swift Testing otherwise starts every test together, each holding its ledgers' files open, and the time
# limits of tests that wait their turn run out.
set -euo pipefail
cd "$(dirname "$0")/.."
Tools/setup.sh
build=(-c release -Xswiftc -enable-testing --scratch-path .build-tests)
# Every module a target imports must be a dependency Package.swift declares for it.
swift build "${build[@]}" --build-tests --explicit-target-dependency-import-check error
swift test "${build[@]}" --skip-build --disable-xctest --experimental-maximum-parallelization-width "$(( $(nproc) * 2 ))" "$@"
# The example server (a package of its own) and its tests, unless only some of the tests above were asked for.
if [ $# -eq 0 ]; then
    swift build --package-path Tools/ExampleServer --build-tests
    swift test --package-path Tools/ExampleServer --skip-build --disable-xctest
fi
