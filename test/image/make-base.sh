#!/bin/sh
# A local stand-in for node:24-bookworm-slim, for machines that reach Debian's mirror and the npm
# registry but no container registry (an operator behind mirrors, our CI machine). It is what the
# official image is in the ways the Dockerfile relies on: Debian bookworm (minbase), Node 24 in
# /usr/local/bin with npm beside it, and a `node` user and group with uid/gid 1000.
#
#   test/image/make-base.sh [ENGINE] [IMAGE_NAME]
#
# ENGINE: docker or podman (default: the first found). IMAGE_NAME: default
# localhost/adforge-stand-in/node:24-bookworm-slim. Build against it with
#   --build-arg NODE_IMAGE=<IMAGE_NAME>
# Needs root (debootstrap), debootstrap, and the repository's node_modules (the Node 24 binary is
# the project's pinned devDependency `node`). DEBIAN_MIRROR picks the mirror (default
# http://deb.debian.org/debian); NPM_VERSION the npm put beside Node (default: 11).
# Behind a TLS-inspecting proxy, EXTRA_CA_CERTS (default: this machine's NODE_EXTRA_CA_CERTS, if
# set) names a PEM file the stand-in's Node and npm trust as well (NODE_EXTRA_CA_CERTS in the image),
# so the image build's `npm ci` reaches the registry: a stand-in's setting, not the Dockerfile's.
set -eu

ENGINE=${1:-$(command -v podman >/dev/null 2>&1 && echo podman || echo docker)}
IMAGE=${2:-localhost/adforge-stand-in/node:24-bookworm-slim}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
NPM_VERSION=${NPM_VERSION:-11}
EXTRA_CA_CERTS=${EXTRA_CA_CERTS:-${NODE_EXTRA_CA_CERTS:-}}
REPO=$(cd "$(dirname "$0")/../.." && pwd)
NODE_BIN="$REPO/node_modules/node/bin/node"

[ "$(id -u)" = 0 ] || { echo "make-base.sh: debootstrap needs root" >&2; exit 1; }
command -v debootstrap >/dev/null || { echo "make-base.sh: needs debootstrap (apt-get install debootstrap)" >&2; exit 1; }
[ -x "$NODE_BIN" ] || { echo "make-base.sh: no $NODE_BIN: run npm install first" >&2; exit 1; }
NODE_VERSION=$("$NODE_BIN" --version | sed 's/^v//')
case "$NODE_VERSION" in 24.*) ;; *) echo "make-base.sh: $NODE_BIN is Node $NODE_VERSION, not 24" >&2; exit 1 ;; esac

WORK=$(mktemp -d /tmp/adforge-base.XXXXXX)
ROOTFS="$WORK/rootfs"
# debootstrap mounts /proc (and more) inside the tree while it works: unmount whatever is still
# mounted there before removing it, and never cross into another file system while removing.
cleanup() {
  awk -v root="$ROOTFS" 'index($2, root) == 1 { print $2 }' /proc/mounts | sort -r | while read -r m; do umount -l "$m" || true; done
  rm -rf --one-file-system "$WORK"
}
trap cleanup EXIT INT TERM

echo "make-base.sh: Debian bookworm (minbase) from $MIRROR"
debootstrap --variant=minbase bookworm "$ROOTFS" "$MIRROR" >"$WORK/debootstrap.log" 2>&1 || {
  tail -20 "$WORK/debootstrap.log" >&2; exit 1; }

echo "make-base.sh: Node $NODE_VERSION and npm $NPM_VERSION"
install -m 0755 "$NODE_BIN" "$ROOTFS/usr/local/bin/node"
(cd "$WORK" && npm pack --silent "npm@$NPM_VERSION" >npm-tarball)
mkdir -p "$ROOTFS/usr/local/lib/node_modules/npm"
tar -xzf "$WORK/$(cat "$WORK/npm-tarball")" -C "$ROOTFS/usr/local/lib/node_modules/npm" --strip-components=1
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$ROOTFS/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$ROOTFS/usr/local/bin/npx"

CA_ENV=
if [ -n "$EXTRA_CA_CERTS" ] && [ -f "$EXTRA_CA_CERTS" ]; then
  echo "make-base.sh: trusting the certificates of $EXTRA_CA_CERTS as well (NODE_EXTRA_CA_CERTS)"
  install -D -m 0644 "$EXTRA_CA_CERTS" "$ROOTFS/usr/local/share/adforge-stand-in/extra-ca.pem"
  CA_ENV=NODE_EXTRA_CA_CERTS=/usr/local/share/adforge-stand-in/extra-ca.pem
fi

# The official image's user: uid and gid 1000, a home, bash.
chroot "$ROOTFS" groupadd --gid 1000 node
chroot "$ROOTFS" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
# Slim: no package lists, no caches (the Dockerfile runs apt-get update itself).
chroot "$ROOTFS" apt-get clean
rm -rf "$ROOTFS"/var/lib/apt/lists/* "$ROOTFS"/var/cache/apt/*.bin "$ROOTFS"/var/log/* "$ROOTFS"/tmp/*
chroot "$ROOTFS" node --version >/dev/null
chroot "$ROOTFS" npm --version >/dev/null

echo "make-base.sh: importing as $IMAGE with $ENGINE"
tar -C "$ROOTFS" --numeric-owner -c . | "$ENGINE" import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$NODE_VERSION" \
  --change 'CMD ["node"]' \
  ${CA_ENV:+--change "ENV $CA_ENV"} \
  - "$IMAGE" >/dev/null
echo "make-base.sh: $IMAGE ready (Node $NODE_VERSION)"
