#version 450
// The quad's colour comes from a uniform buffer (a descriptor set).
layout(set = 0, binding = 0) uniform Color { vec4 color; };
layout(location = 0) out vec4 out_color;

void main() {
    out_color = color;
}
