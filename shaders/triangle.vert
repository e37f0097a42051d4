#version 450
// A triangle from the vertex index alone (no vertex buffer), offset per instance.
void main() {
    vec2 corners[3] = vec2[](vec2(-0.8, 0.8), vec2(0.8, 0.8), vec2(0.0, -0.8));
    vec2 p = corners[gl_VertexIndex % 3] * (1.0 - 0.2 * float(gl_InstanceIndex));
    gl_Position = vec4(p, 0.5, 1.0);
}
