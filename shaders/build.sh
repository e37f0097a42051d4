#!/usr/bin/env bash
# Recompiles the shaders' SPIR-V (committed, so that building needs no shader compiler).
# Needs glslang-tools. Ray tracing and mesh shading stages need SPIR-V 1.4 (Vulkan 1.2 and
# later); every shader is compiled for Vulkan 1.3's environment except the original three,
# which the Vulkan 1.3 drivers of 2022 must also take, and the test layer's shape_ticks.comp,
# which runs on devices without maintenance4 (Vulkan 1.3's SPIR-V sizes its workgroup with
# LocalSizeId, which needs it).
set -euo pipefail
cd "$(dirname "$0")"
for src in *.comp *.vert *.frag *.rgen *.rmiss *.rchit *.rahit *.task *.mesh; do
  [ -e "$src" ] || continue
  case "$src" in
    fill.comp|triangle.vert|triangle.frag|full_screen.vert|shape_ticks.comp) env=() ;;
    *) env=(--target-env vulkan1.3) ;;
  esac
  glslangValidator -V --quiet "${env[@]}" "$src" -o "$src.spv"
done
