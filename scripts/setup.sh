#!/usr/bin/env bash
# Installs what utrace's build, demo and tests need on a fresh Debian machine (run as root),
# skipping whatever is already there. Sourced by demo.sh and test.sh: with
# `setup_for=demo` only what the demo runs (Lavapipe, the loader, an X server), else
# everything the tests use too.
set -euo pipefail

setup_for=${setup_for:-tests}
packages=(
  mesa-vulkan-drivers     # Lavapipe, the Vulkan driver of the demo and the tests
  libvulkan1              # the Vulkan loader
  xvfb                    # an X server for the demo's window and the swapchain scenarios
  xauth                   # xvfb-run needs it
)
if [[ "$setup_for" != demo ]]; then
  packages+=(
    vulkan-validationlayers # VK_LAYER_KHRONOS_validation, beneath utrace in the tests
    vulkan-tools            # vkcube, a real application the tests trace
    glmark2-x11             # OpenGL on Zink under xvfb-run: the X server loads the layer too
    chromium                # a real browser for the test of `utrace view`'s page
    tmux                    # drives `utrace top` on a terminal in its test (headless)
    man-db                  # renders the command's man pages in their test
    bash-completion         # loads the installed package's completions in its test
    lintian                 # Debian's package checker, run on the package in its test
    gfxreconstruct          # captures replayed under utrace bench (the CI recipe's test)
  )
fi
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

# The tests' lints (CI runs cargo fmt and clippy); the demo only builds.
if [[ "$setup_for" != demo ]]; then
  for component in rustfmt clippy; do
    if ! rustup component list --installed 2>/dev/null | grep -q "^$component"; then
      echo "setup: adding Rust component $component" >&2
      rustup component add "$component"
    fi
  done
fi

# Lavapipe 25.0 (Mesa 25.0.7 from bookworm-backports, Vulkan 1.4: ray tracing, mesh shading,
# shader objects, generated commands) beside the system's 22.3, which stays the default.
# Its package is downloaded with a private apt state (the system's sources, lists and
# installed packages are left alone) and extracted into target/mesa-25.0, with a driver
# manifest naming the library by absolute path. Only mesa-vulkan-drivers is needed:
# Lavapipe's libdrm symbols are all in Debian 12's libdrm2.
lavapipe_25_dir() {
  local target=${CARGO_TARGET_DIR:-target}
  [[ "$target" == /* ]] || target="$PWD/$target"
  echo "$target/mesa-25.0"
}
provide_lavapipe_25() {
  local dir
  dir=$(lavapipe_25_dir)
  [[ -f "$dir/lvp_icd.json" ]] && return 0
  echo "setup: providing Lavapipe 25.0 (mesa-vulkan-drivers from bookworm-backports) in $dir" >&2
  local work
  work=$(mktemp -d /tmp/utrace-mesa25.XXXXXX)
  mkdir -p "$work/parts" "$work/lists/partial" "$work/cache/archives/partial" "$work/debs"
  cat > "$work/parts/backports.sources" <<'SOURCES'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  local apt_opts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$work/parts"
    -o "Dir::State::Lists=$work/lists" -o "Dir::Cache=$work/cache" -o Debug::NoLocking=1
    -o APT::Sandbox::User=root)
  apt-get "${apt_opts[@]}" update -qq
  (cd "$work/debs" && apt-get "${apt_opts[@]}" download -qq mesa-vulkan-drivers/bookworm-backports)
  rm -rf "$dir.partial"
  mkdir -p "$dir.partial/root"
  dpkg-deb -x "$work"/debs/mesa-vulkan-drivers_*.deb "$dir.partial/root"
  local lib="$dir/root/usr/lib/x86_64-linux-gnu/libvulkan_lvp.so"
  local version
  version=$(dpkg-deb -f "$work"/debs/mesa-vulkan-drivers_*.deb Version)
  case "$version" in 25.*) ;; *) echo "setup: bookworm-backports has mesa-vulkan-drivers $version, not 25.x" >&2; rm -rf "$work" "$dir.partial"; return 1 ;; esac
  echo "$version" > "$dir.partial/VERSION"
  cat > "$dir.partial/lvp_icd.json" <<MANIFEST
{
    "file_format_version": "1.0.0",
    "ICD": {
        "library_path": "$lib",
        "api_version": "1.4.305"
    }
}
MANIFEST
  mv "$dir.partial" "$dir"
  rm -rf "$work"
}
# The tests' second driver; the demo runs on the system's.
if [[ "$setup_for" != demo ]]; then
  provide_lavapipe_25
  # For scripts and tests that run on Lavapipe 25.0 (the tests find it there themselves).
  export UTRACE_LAVAPIPE_25_ICD="$(lavapipe_25_dir)/lvp_icd.json"
fi

# Lavapipe only: the machine may list other drivers whose hardware is absent.
export VK_DRIVER_FILES=${VK_DRIVER_FILES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
# Mesa's WSI wants a runtime directory.
if [ -z "${XDG_RUNTIME_DIR:-}" ] || [ ! -d "$XDG_RUNTIME_DIR" ]; then
  export XDG_RUNTIME_DIR=$(mktemp -d /tmp/utrace-xdg.XXXXXX)
  chmod 700 "$XDG_RUNTIME_DIR"
fi
