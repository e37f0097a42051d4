#version 450
// One triangle covering the whole viewport (its corners outside it are clipped away):
// (-1,-1), (3,-1), (-1,3), from the vertex index alone.
void main() {
    vec2 p = vec2(float((gl_VertexIndex & 1) << 2) - 1.0, float((gl_VertexIndex & 2) << 1) - 1.0);
    gl_Position = vec4(p, 0.5, 1.0);
}
