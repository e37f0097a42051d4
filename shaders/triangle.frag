#version 450
// A constant colour: the tests read it back from the color attachment.
layout(location = 0) out vec4 color;
void main() {
    color = vec4(1.0, 0.5, 0.0, 1.0);
}
