#version 450
// The pushed colour (the same push block as the vertex shader's: shader objects drawn
// together must declare identical push constant ranges).
layout(push_constant) uniform Push { vec4 color; vec2 offset; };
layout(location = 0) out vec4 out_color;

void main() {
    out_color = color;
}
