#!/usr/bin/env bash
# Times README command (1) as a newcomer meets it: on a fresh Debian 12 (bookworm)
# made with debootstrap from Debian's packages (minbase: what a Debian container
# image holds), with the committed tree of this checkout and ../shared beside it.
# Needs root (chroot, mounts) and debootstrap. Prints the `time` of the whole
# `bash scripts/demo.sh` inside the chroot and one JSON line with it.
#
#   bash scripts/time_fresh_demo.sh [ROOT]   (ROOT defaults to /work/eagle-fresh-demo;
#                                            set EAGLE_DEBOOTSTRAP_TAR to a tarball of an
#                                            earlier debootstrap to skip making one)
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
root="${1:-/work/eagle-fresh-demo}"
mirror="${EAGLE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

cleanup() {
  for m in work/shared dev/pts dev sys proc; do umount -l "$root/$m" 2>/dev/null || true; done
}
trap cleanup EXIT
cleanup
rm -rf "$root"
mkdir -p "$root"
if [ -n "${EAGLE_DEBOOTSTRAP_TAR:-}" ]; then
  tar -C "$root" -xf "$EAGLE_DEBOOTSTRAP_TAR"
else
  debootstrap --variant=minbase bookworm "$root" "$mirror"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf"
# Where the host reaches the npm registry through a TLS-inspecting proxy (this
# workplace does), the chroot trusts the host's CA bundle as the host does; a real
# fresh machine needs nothing of the kind. EAGLE_FRESH_CA_BUNDLE= (empty) turns it off.
ca_bundle="${EAGLE_FRESH_CA_BUNDLE-${NODE_EXTRA_CA_CERTS:-}}"
ca_env=()
if [ -n "$ca_bundle" ] && [ -f "$ca_bundle" ]; then
  mkdir -p "$root/etc/eagle-host-ca"
  cp "$ca_bundle" "$root/etc/eagle-host-ca/bundle.crt"
  ca_env=(NODE_EXTRA_CA_CERTS=/etc/eagle-host-ca/bundle.crt npm_config_cafile=/etc/eagle-host-ca/bundle.crt)
fi
mkdir -p "$root/work/shared"
git clone -q "$repo" "$root/work/main"
mount --bind "$repo/../shared" "$root/work/shared"
mount -o remount,bind,ro "$root/work/shared"
mount -t proc proc "$root/proc"
mount --rbind /sys "$root/sys"
mount --rbind /dev "$root/dev"

start=$(date +%s)
chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  TERM=dumb "${ca_env[@]}" bash -c 'cd /work/main && time bash scripts/demo.sh'
seconds=$(( $(date +%s) - start ))
echo "{\"fresh_demo_s\": $seconds, \"debian\": \"$(cat "$root/etc/debian_version")\", \"commit\": \"$(git rev-parse --short HEAD)\"}"
