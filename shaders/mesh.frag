#version 460
// The quad's colour from the mesh shader.
layout(location = 0) flat in vec4 color;
layout(location = 0) out vec4 out_color;

void main() {
    out_color = color;
}
