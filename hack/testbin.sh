#!/usr/bin/env bash
# Builds the control-plane binaries envtest needs (kube-apiserver, etcd) from
# the Go module proxy, because no envtest download site is reachable and there
# is no container engine. The build runs in a throwaway tools module so the
# project's go.mod never carries k8s.io/kubernetes. Binaries are cached per
# version outside the clone (CI clones fresh; the cache survives), and a
# second run only prints the folder. The last line of output is the folder.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.37.2}
ETCD_VERSION=${ETCD_VERSION:-v3.7.3}
STAGING_VERSION=v0.${K8S_VERSION#v1.}
cache_root=${XDG_CACHE_HOME:-$HOME/.cache}/kvpick-testbin
dest=$cache_root/k8s-$K8S_VERSION
GO=${GO:-go}

have() { [ -x "$dest/kube-apiserver" ] && [ -x "$dest/etcd" ]; }
if have; then
	echo "$dest"
	exit 0
fi
mkdir -p "$dest"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Staging modules: k8s.io/kubernetes requires them at v0.0.0 and relies on
# replace directives, which do not apply to a module used as a dependency.
staging="api apiextensions-apiserver apimachinery apiserver cli-runtime client-go cloud-provider
cluster-bootstrap code-generator component-base component-helpers controller-manager cri-api
cri-client cri-streaming csi-translation-lib dynamic-resource-allocation endpointslice externaljwt
kms kube-aggregator kube-controller-manager kube-proxy kube-scheduler kubectl kubelet metrics
mount-utils pod-security-admission sample-apiserver streaming"

if [ ! -x "$dest/kube-apiserver" ]; then
	mkdir -p "$work/k8s"
	{
		echo "module kvpick.local/testbin/k8s"
		echo
		echo "go 1.26.0"
		echo
		echo "require k8s.io/kubernetes $K8S_VERSION"
		echo
		for m in $staging; do echo "replace k8s.io/$m => k8s.io/$m $STAGING_VERSION"; done
	} >"$work/k8s/go.mod"
	printf 'package tools\n\nimport _ "k8s.io/kubernetes/cmd/kube-apiserver"\n' >"$work/k8s/tools.go"
	echo "testbin: resolving k8s.io/kubernetes $K8S_VERSION modules (first time: a minute or two)" >&2
	(cd "$work/k8s" && GOFLAGS=-mod=mod $GO mod tidy >/dev/null 2>&1 || GOFLAGS=-mod=mod $GO mod tidy)
	echo "testbin: building kube-apiserver $K8S_VERSION (first time: 4-10 minutes on 2 cores, silent)" >&2
	ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
	minor=${K8S_VERSION#v1.}
	minor=${minor%%.*}
	ldflags="$ldflags -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor"
	(cd "$work/k8s" && $GO build -trimpath -ldflags "$ldflags" -o "$dest/kube-apiserver.tmp" k8s.io/kubernetes/cmd/kube-apiserver)
	mv "$dest/kube-apiserver.tmp" "$dest/kube-apiserver"
	echo "testbin: kube-apiserver done" >&2
fi

if [ ! -x "$dest/etcd" ]; then
	mkdir -p "$work/etcd"
	printf 'module kvpick.local/testbin/etcd\n\ngo 1.26.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" >"$work/etcd/go.mod"
	cat >"$work/etcd/main.go" <<'EOF'
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
EOF
	echo "testbin: resolving etcd $ETCD_VERSION modules" >&2
	(cd "$work/etcd" && GOFLAGS=-mod=mod $GO mod tidy >/dev/null 2>&1 || GOFLAGS=-mod=mod $GO mod tidy)
	echo "testbin: building etcd $ETCD_VERSION (about a minute, silent)" >&2
	(cd "$work/etcd" && $GO build -trimpath -ldflags "-s -w" -o "$dest/etcd.tmp" .)
	mv "$dest/etcd.tmp" "$dest/etcd"
	echo "testbin: etcd done" >&2
fi

have
echo "$dest"
