#!/usr/bin/env bash
# Installs the Debian package, uses it as a user would, and removes it, in a throwaway
# root: run as root inside a mount namespace of its own
#
#   unshare --mount --propagation private bash package-in-throwaway-root.sh DEB WORKLOAD OUT
#
# /usr, /etc and /var are overlaid with folders on a tmpfs of this namespace, so dpkg,
# the loader and man see the machine's files and write only to the overlays; they vanish
# with the namespace, and the machine is left as it was whatever happens here. Each step's
# output goes to OUT/<step>.out (stdout), .err and .rc, for tests/tests/package.rs to judge;
# a failed step does not stop the next (removal must be checked even after a bad run).
set -uo pipefail
deb=$1 workload=$2 out=$3

if [[ $(id -u) != 0 ]]; then
  echo "package test: needs root (dpkg and mounts)" >&2
  exit 2
fi
if [[ "$(readlink /proc/self/ns/mnt)" == "$(readlink /proc/1/ns/mnt)" ]]; then
  echo "package test: refusing to run in the machine's own mount namespace (use unshare --mount)" >&2
  exit 2
fi
scratch=$(mktemp -d /tmp/utrace-throwaway-root.XXXXXX)
mount -t tmpfs utrace-throwaway-root "$scratch" || exit 2
for d in usr etc var; do
  mkdir "$scratch/$d" "$scratch/$d.work"
  mount -t overlay overlay -o "lowerdir=/$d,upperdir=$scratch/$d,workdir=$scratch/$d.work" "/$d" || exit 2
done
mkdir "$scratch/home"

# step NAME COMMAND...: runs COMMAND, its stdout, stderr and status into OUT/NAME.*.
step() {
  local name=$1
  shift
  "$@" > "$out/$name.out" 2> "$out/$name.err"
  echo $? > "$out/$name.rc"
}
# as_user COMMAND...: COMMAND with nothing of this process's environment (no
# VK_ADD_LAYER_PATH, no layer variables), a home of its own, Lavapipe as the driver.
as_user() {
  env -i PATH=/usr/bin:/bin HOME="$scratch/home" LANG=C.UTF-8 \
    VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json "$@"
}
listing() {
  find /usr /etc /var/lib/dpkg/info -xdev -printf '%p %y %m\n' | sort
}

# The package installed on the machine itself is not ours to judge: take it out of this
# root first (the machine's copy is untouched).
if dpkg-query -W -f='${Status}' utrace 2>/dev/null | grep -q " installed"; then
  echo "utrace is installed on this machine: removed in the throwaway root only" > "$out/note.out"
  dpkg -r utrace > /dev/null
fi
listing > "$out/before.list"

step install dpkg -i "$deb"
step files dpkg -L utrace
# Enabled by name: the loader finds the system's manifest by itself.
step explicit as_user VK_INSTANCE_LAYERS=VK_LAYER_utrace:VK_LAYER_KHRONOS_validation \
  GPU_TRACE=1 UTRACE_LOG=info VK_LOADER_DEBUG=layer \
  "$workload" --scenario basic --report "$out/explicit.json"
# GPU_TRACE=1 alone: the implicit manifest loads it; UTRACE_DISABLE=1 keeps it out.
step implicit as_user GPU_TRACE=1 "$workload" --scenario basic --report "$out/implicit.json"
step disabled as_user GPU_TRACE=1 UTRACE_DISABLE=1 "$workload" --scenario basic \
  --report "$out/disabled.json"
# /usr/bin/utrace has no layer beside it: it uses the installed one.
step run as_user /usr/bin/utrace run --out "$out/run.txt" -- "$workload" --scenario basic \
  --report "$out/run.json"
step man as_user MANWIDTH=80 man utrace
step man-run as_user MANWIDTH=80 man utrace-run
step man-layer as_user MANWIDTH=80 man 7 utrace-layer
# Completions as bash-completion loads them on demand, when the command is first completed.
# (_completion_loader returns 124, "try again", once it has loaded them.)
step completion as_user bash -c 'source /usr/share/bash-completion/bash_completion || exit 1
  _completion_loader utrace; complete -p utrace || exit 1
  COMP_WORDS=(utrace rep); COMP_CWORD=1; _utrace utrace rep utrace; echo "${COMPREPLY[@]}"'

step remove dpkg -r utrace
step status dpkg-query -W -f='${Status}' utrace
listing > "$out/after.list"
diff "$out/before.list" "$out/after.list" > "$out/left-behind.out"
exit 0
