#version 450
// A right triangle 24.5 pixels wide and high, its right angle at the pushed pixel offset of a
// 64x64 image (the half pixel keeps every pixel centre off the long edge, so the host can
// check each pixel exactly).
layout(push_constant) uniform Push { vec4 color; vec2 offset; };

void main() {
    vec2 corners[3] = vec2[](vec2(0.0, 0.0), vec2(24.5, 0.0), vec2(0.0, 24.5));
    vec2 p = offset + corners[gl_VertexIndex % 3];
    gl_Position = vec4(p / 32.0 - 1.0, 0.5, 1.0);
}
