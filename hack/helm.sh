#!/usr/bin/env bash
# Installs helm from the Go module proxy into a per-machine cache outside the
# clone (built once, reused by every later run) and prints its path.
# No download site for helm release tarballs is reachable here; `go install`
# of the tagged module is, and gives the same binary.
set -euo pipefail
version=${HELM_VERSION:-v3.22.0}
dir="${XDG_CACHE_HOME:-$HOME/.cache}/kvpick-testbin/helm-${version}"
bin="$dir/helm"
if [ ! -x "$bin" ]; then
  mkdir -p "$dir"
  echo "building helm ${version} into $dir (once per machine)" >&2
  GOBIN="$dir" GOFLAGS=-buildvcs=false go install "helm.sh/helm/v3/cmd/helm@${version}"
fi
echo "$bin"
