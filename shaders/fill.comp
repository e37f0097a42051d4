#version 450
// The compute work of the tests and the demo: data[i] = i * 3 + base.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Data { uint data[]; };
layout(push_constant) uniform Push { uint base; uint count; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i < count) {
        data[i] = i * 3u + base;
    }
}
