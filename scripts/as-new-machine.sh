#!/usr/bin/env bash
# Times the demo or CI as on a new machine, without changing this one: in a mount
# namespace of its own whose /usr, /etc and /var are overlays on a tmpfs, the packages the
# set-up installs are purged and apt's lists and cache emptied; then a fresh clone of this
# checkout's HEAD runs `bash scripts/demo.sh` or `bash .ci/run` with an empty crate cache,
# downloading everything again. Everything done there vanishes with the namespace, and
# the clone and its crate cache are removed at the end. Run as root:
#
#   bash scripts/as-new-machine.sh demo|ci
set -euo pipefail
what=${1:-}
case "$what" in
  demo) command=(bash scripts/demo.sh) ;;
  ci) command=(bash .ci/run) ;;
  *) echo "usage: bash scripts/as-new-machine.sh demo|ci" >&2; exit 2 ;;
esac
[[ $(id -u) == 0 ]] || { echo "as-new-machine: run as root (mounts, apt)" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/.." && pwd)
if [[ "${AS_NEW_MACHINE_INSIDE:-}" != 1 ]]; then
  exec env AS_NEW_MACHINE_INSIDE=1 unshare --mount --propagation private bash "$0" "$what"
fi
scratch=$(mktemp -d "${TMPDIR:-/tmp}/as-new-machine.XXXXXX")
mount -t tmpfs as-new-machine "$scratch"
for d in usr etc var; do
  mkdir "$scratch/$d" "$scratch/$d.work"
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=$scratch/$d,workdir=$scratch/$d.work" "/$d"
done
export DEBIAN_FRONTEND=noninteractive
apt-get purge -y -qq mesa-vulkan-drivers libvulkan1 xvfb xauth vulkan-validationlayers \
  vulkan-tools glmark2-x11 chromium tmux man-db bash-completion lintian > /dev/null 2>&1 || true
apt-get autoremove -y -qq > /dev/null 2>&1 || true
apt-get clean
rm -rf /var/lib/apt/lists/*
clone=$(mktemp -d "${TMPDIR:-/tmp}/as-new-machine-clone.XXXXXX")
git clone -q "$repo" "$clone"
cd "$clone"
CARGO_HOME=$(mktemp -d "${TMPDIR:-/tmp}/as-new-machine-cargo.XXXXXX")
export CARGO_HOME
echo "as-new-machine: ${command[*]} in $clone" >&2
start=$SECONDS
status=0
"${command[@]}" || status=$?
echo "as-new-machine: ${command[*]} exited $status after $((SECONDS - start)) s" >&2
cd /
rm -rf "$CARGO_HOME" "$clone"
exit "$status"
