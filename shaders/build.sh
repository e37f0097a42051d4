#!/usr/bin/env bash
# Recompiles the shaders' SPIR-V (committed, so that building needs no shader compiler).
# Needs glslang-tools.
set -euo pipefail
cd "$(dirname "$0")"
for src in *.comp *.vert *.frag; do
  [ -e "$src" ] || continue
  glslangValidator -V --quiet "$src" -o "$src.spv"
done
