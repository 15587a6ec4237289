#!/bin/sh
# Installs what cxla needs to build and test, from Debian 12's own packages.
# Idempotent: does nothing when everything is already present. python3-wheel: `make python`
# installs the package with pip --no-build-isolation, which builds a wheel with the system's
# setuptools and needs the wheel package beside it.
set -e
PKGS="make gcc libc6-dev llvm-19-dev clang-19 libclang-rt-19-dev libopenblas-dev libdnnl-dev libfftw3-dev zlib1g-dev libzstd-dev graphviz pkgconf help2man python3 python3-numpy python3-venv python3-wheel libopenmpi-dev openmpi-bin dataset-fashion-mnist"
missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "setup: installing$missing"
SUDO=""
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "setup: need root or sudo to install:$missing" >&2; exit 1; }
  SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
