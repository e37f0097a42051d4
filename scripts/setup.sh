#!/usr/bin/env bash
# Installs what utrace's build, demo and tests need on a fresh Debian machine (run as root),
# skipping whatever is already there. Sourced by demo.sh and test.sh.
set -euo pipefail

packages=(
  mesa-vulkan-drivers     # Lavapipe, the Vulkan driver of the demo and the tests
  libvulkan1              # the Vulkan loader
  vulkan-validationlayers # VK_LAYER_KHRONOS_validation, beneath utrace in the tests
  xvfb                    # an X server for the swapchain (frames) scenarios
  xauth                   # xvfb-run needs it
  vulkan-tools            # vkcube, a real application the tests trace
  chromium                # a real browser for the test of `utrace view`'s page
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

for component in rustfmt clippy; do
  if ! rustup component list --installed 2>/dev/null | grep -q "^$component"; then
    echo "setup: adding Rust component $component" >&2
    rustup component add "$component"
  fi
done

# Lavapipe only: the machine may list other drivers whose hardware is absent.
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
# Mesa's WSI wants a runtime directory.
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "$XDG_RUNTIME_DIR" ]; then
  export XDG_RUNTIME_DIR=$(mktemp -d /tmp/utrace-xdg.XXXXXX)
  chmod 700 "$XDG_RUNTIME_DIR"
fi
