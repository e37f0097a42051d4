#version 450
// A quad of the `maintenance` scenario: its four corners come from the index (no vertex
// buffer), placed at `origin` (pixels of the 64x64 target) with `size`, both pushed.
layout(push_constant) uniform Push { vec2 origin; vec2 size; };

void main() {
    vec2 corner = vec2(gl_VertexIndex & 1, gl_VertexIndex >> 1);
    vec2 pixel = origin + corner * size;
    gl_Position = vec4(pixel / 32.0 - 1.0, 0.0, 1.0);
}
