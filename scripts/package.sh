#!/usr/bin/env bash
# Builds the Debian package utrace_<version>_<arch>.deb (into the folder given, by default
# target/debian) from the release build, with dpkg-deb: the files are few and all ours,
# so a control file and a staging tree say everything a packaging tool would (and
# dpkg-deb is on every Debian machine; cargo-deb would be one more tool to install).
#
#   /usr/lib/<triplet>/utrace/libVkLayer_utrace.so        the layer (a private folder: a
#                                                         Rust cdylib has no SONAME)
#   /usr/share/vulkan/explicit_layer.d/VkLayer_utrace.json VK_INSTANCE_LAYERS=VK_LAYER_utrace
#   /usr/share/vulkan/implicit_layer.d/VkLayer_utrace_implicit.json  GPU_TRACE=1 alone
#   /usr/bin/utrace, its man pages, the layer's (utrace-layer(7)), and the command's
#   bash, zsh and fish completions
#   /usr/share/doc/utrace/copyright, changelog.gz (a native package: no Debian revision)
#
# The maintainer is DEBFULLNAME <DEBEMAIL>, Debian's own variables, where set; the
# project has no address of its own yet, so by default lintian says bogus-mail-host
# (docs/packaging.md).
#
# UTRACE_PACKAGE_PROFILE=debug packages the debug build instead (the tests' quick
# package); UTRACE_PACKAGE_BUILT=1 packages what target/<profile> holds without building.
set -euo pipefail
cd "$(dirname "$0")/.."

out=${1:-target/debian}
profile=${UTRACE_PACKAGE_PROFILE:-release}
case "$profile" in
  release) dir=target/release; build=(--release) ;;
  debug) dir=target/debug; build=() ;;
  *) echo "package: UTRACE_PACKAGE_PROFILE is release or debug, not $profile" >&2; exit 2 ;;
esac
if [[ "${UTRACE_PACKAGE_BUILT:-}" != 1 ]]; then
  cargo build --locked --quiet "${build[@]}" -p utrace-layer -p utrace-cli
fi
for f in "$dir/libVkLayer_utrace.so" "$dir/utrace"; do
  [[ -f "$f" ]] || { echo "package: $f is missing (build it first)" >&2; exit 1; }
done

arch=$(dpkg --print-architecture)
case "$arch" in
  amd64) triplet=x86_64-linux-gnu ;;
  arm64) triplet=aarch64-linux-gnu ;;
  *) echo "package: no multiarch folder known for $arch" >&2; exit 1 ;;
esac
# "utrace 0.1.0 (commit 1a2b3c4d5e6f)": the package's version is the first word after.
described=$("$dir/utrace" --version)
version=$(echo "$described" | awk '{print $2}')
layer_dir=/usr/lib/$triplet/utrace

stage=$(mktemp -d "${TMPDIR:-/tmp}/utrace-package.XXXXXX")
trap 'rm -rf "$stage"' EXIT
root=$stage/root
install -d "$root$layer_dir" "$root/usr/bin" "$root/usr/share/man/man1" \
  "$root/usr/share/vulkan/explicit_layer.d" "$root/usr/share/vulkan/implicit_layer.d" \
  "$root/usr/share/doc/utrace" "$root/usr/share/bash-completion/completions" \
  "$root/usr/share/zsh/vendor-completions" "$root/usr/share/fish/vendor_completions.d" \
  "$root/DEBIAN"
install -m 0644 "$dir/libVkLayer_utrace.so" "$root$layer_dir/"
install -m 0755 "$dir/utrace" "$root/usr/bin/"
strip --strip-unneeded "$root$layer_dir/libVkLayer_utrace.so" "$root/usr/bin/utrace" 2>/dev/null || true

# The manifests name the library by the absolute path the package installs it at, and
# describe the build (its version and commit).
for m in VkLayer_utrace.json VkLayer_utrace_implicit.json; do
  kind=explicit_layer.d
  [[ "$m" == *implicit* ]] && kind=implicit_layer.d
  sed -e "s|\"library_path\": \"[^\"]*\"|\"library_path\": \"$layer_dir/libVkLayer_utrace.so\"|" \
      -e "0,/\"description\": \"utrace: /s|\"description\": \"utrace: |\"description\": \"utrace ${described#utrace }: |" \
      "manifest/$m" > "$root/usr/share/vulkan/$kind/$m"
  chmod 0644 "$root/usr/share/vulkan/$kind/$m"
done

"$dir/utrace" man "$root/usr/share/man/man1"
# The layer's own page, utrace-layer(7), goes in section 7.
install -d "$root/usr/share/man/man7"
mv "$root"/usr/share/man/man1/*.7 "$root/usr/share/man/man7/"
gzip -9n "$root"/usr/share/man/man1/*.1 "$root"/usr/share/man/man7/*.7
"$dir/utrace" completions bash > "$root/usr/share/bash-completion/completions/utrace"
"$dir/utrace" completions zsh > "$root/usr/share/zsh/vendor-completions/_utrace"
"$dir/utrace" completions fish > "$root/usr/share/fish/vendor_completions.d/utrace.fish"

cat > "$root/usr/share/doc/utrace/copyright" <<'COPYRIGHT'
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: utrace

Files: *
Copyright: 2026 the utrace developers
License: MIT
 Permission is hereby granted, free of charge, to any person obtaining a copy of this
 software and associated documentation files (the "Software"), to deal in the Software
 without restriction, including without limitation the rights to use, copy, modify,
 merge, publish, distribute, sublicense, and/or sell copies of the Software, and to
 permit persons to whom the Software is furnished to do so, subject to the following
 conditions:
 .
 The above copyright notice and this permission notice shall be included in all copies
 or substantial portions of the Software.
 .
 THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED,
 INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A
 PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT
 HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER LIABILITY, WHETHER IN AN ACTION OF
 CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN CONNECTION WITH THE SOFTWARE OR
 THE USE OR OTHER DEALINGS IN THE SOFTWARE.
COPYRIGHT
maintainer="${DEBFULLNAME:-utrace developers} <${DEBEMAIL:-utrace@localhost}>"
cat > "$stage/changelog" <<CHANGELOG
utrace ($version) unstable; urgency=medium

  * Built from ${described#utrace }.

 -- $maintainer  $(date -R -u -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}")
CHANGELOG
gzip -9nc "$stage/changelog" > "$root/usr/share/doc/utrace/changelog.gz"

size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<CONTROL
Package: utrace
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: libc6, libgcc-s1, libvulkan1
Section: devel
Priority: optional
Description: GPU timestamps of any Vulkan application's work
 A Vulkan layer (VK_LAYER_utrace) that times the command buffers, render
 passes, draws, dispatches, copies and debug labels an application records, on
 any driver, without stalling it, and writes them as text, JSON, CSV or
 Perfetto GPU render stages; and the utrace command, which reports where the
 GPU time went, compares traces and draws them. GPU_TRACE=1 turns it on for
 any Vulkan application.
CONTROL

mkdir -p "$out"
deb="$out/utrace_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
echo "$deb"
