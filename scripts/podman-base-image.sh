#!/usr/bin/env bash
# A local debian:bookworm-slim for podman, made from Debian's packages (debootstrap), for machines
# that reach Debian's mirror but no image registry. The Dockerfiles' `FROM debian:bookworm-slim`
# then resolves with no pull. Root only (debootstrap, rootful podman).
#
#   scripts/podman-base-image.sh          # no-op when the image exists
#
# The root file system is kept as a tarball in $POOLSCOPE_ROOTFS_CACHE (default
# /var/cache/poolscope), so a wiped image store is refilled without a new debootstrap (~95 s).
set -euo pipefail

IMAGE=docker.io/library/debian:bookworm-slim
CACHE=${POOLSCOPE_ROOTFS_CACHE:-/var/cache/poolscope}
TARBALL=$CACHE/debian-bookworm-minbase.tar

if podman image exists "$IMAGE"; then
  echo "base image: $IMAGE present"
  exit 0
fi

if [[ ! -s $TARBALL ]]; then
  # The mirror apt already uses here (deb822 or one-line sources), else Debian's default.
  mirror=$(sed -n 's|^URIs: *\([^ ]*/debian\)/*$|\1|p' /etc/apt/sources.list.d/debian.sources 2>/dev/null | head -n 1)
  if [[ -z $mirror ]]; then
    mirror=$(awk '$1 == "deb" && $2 ~ /\/debian\/?$/ {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
  fi
  mirror=${mirror:-http://deb.debian.org/debian}
  rootfs=$(mktemp -d /var/tmp/poolscope-rootfs.XXXXXX)
  trap 'rm -rf "$rootfs"' EXIT
  echo "base image: debootstrap --variant=minbase bookworm from $mirror"
  debootstrap --variant=minbase bookworm "$rootfs" "$mirror" >"$rootfs.log" 2>&1 || {
    tail -n 30 "$rootfs.log" >&2
    exit 1
  }
  rm -f "$rootfs.log"
  rm -rf "$rootfs"/var/lib/apt/lists/* "$rootfs"/var/cache/apt/*.bin "$rootfs"/var/cache/apt/archives/*.deb
  rm -f "$rootfs/etc/apt/sources.list"
  base=${mirror%/debian}
  cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $mirror
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: $base/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
  # This host's certificate authorities (a TLS-inspecting proxy's among them): without them pip
  # and npm inside an image build fail their certificate checks. `apt-get install ca-certificates`
  # in an image keeps the local ones (/usr/local/share/ca-certificates) in its bundle.
  mkdir -p "$rootfs/etc/ssl/certs" "$rootfs/usr/local/share/ca-certificates"
  cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/"
  if compgen -G '/usr/local/share/ca-certificates/*' >/dev/null; then
    cp -r /usr/local/share/ca-certificates/. "$rootfs/usr/local/share/ca-certificates/"
  fi
  mkdir -p "$CACHE"
  tar -C "$rootfs" -cf "$TARBALL.tmp" .
  mv "$TARBALL.tmp" "$TARBALL"
fi

podman import --quiet --change 'CMD ["bash"]' "$TARBALL" localhost/debian:bookworm-slim >/dev/null
podman tag localhost/debian:bookworm-slim "$IMAGE"
echo "base image: $IMAGE imported from $TARBALL"
