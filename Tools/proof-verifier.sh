#!/usr/bin/env bash
# Builds proof-verifier (Tools/ProofVerifier), an independent checker of checkpoints and Merkle proofs written
# with Go's golang.org/x/mod/sumdb/note and tlog, into OUT. Installs Debian's Go and golang.org/x/mod source
# (golang-go, golang-golang-x-mod-dev) through Tools/setup.sh when missing, then builds offline in GOPATH mode
# against /usr/share/gocode, downloading nothing.
#
#   Tools/proof-verifier.sh OUT   GOCACHE defaults to a temporary directory removed afterwards;
#                                 set PROOF_VERIFIER_GOCACHE to keep the cache between builds
set -euo pipefail
if [ $# -ne 1 ] || [ -z "$1" ]; then
    echo "usage: $0 OUT" >&2
    exit 2
fi
out=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source_dir="$here/ProofVerifier"
gopath=/usr/share/gocode

fail() {
    echo "proof-verifier.sh: $*" >&2
    exit 1
}

bash "$here/setup.sh" golang-go golang-golang-x-mod-dev || fail "installing golang-go and golang-golang-x-mod-dev failed"
command -v go >/dev/null 2>&1 || fail "go is not on PATH after installing golang-go"
for package in note tlog; do
    [ -d "$gopath/src/golang.org/x/mod/sumdb/$package" ] ||
        fail "$gopath/src/golang.org/x/mod/sumdb/$package is missing; is golang-golang-x-mod-dev installed?"
done

mkdir -p "$(dirname "$out")" || fail "cannot create the directory of $out"
case $out in /*) ;; *) out="$PWD/$out" ;; esac

if [ -n "${PROOF_VERIFIER_GOCACHE:-}" ]; then
    cache=$PROOF_VERIFIER_GOCACHE
    mkdir -p "$cache"
else
    cache=$(mktemp -d "${TMPDIR:-/tmp}/proof-verifier-gocache.XXXXXX")
    trap 'rm -rf "$cache"' EXIT
fi

# GO111MODULE=off resolves imports from GOPATH (Debian's packaged sources); GOPROXY=off and GOTOOLCHAIN=local
# make sure nothing is fetched.
(
    cd "$source_dir"
    GOPATH=$gopath GO111MODULE=off GOFLAGS= GOPROXY=off GOTOOLCHAIN=local GOCACHE=$cache \
        go build -trimpath -o "$out" .
) || fail "go build of $source_dir failed"
echo "proof-verifier.sh: built $out ($(go version | cut -d' ' -f3))" >&2
