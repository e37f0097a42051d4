#version 450
// The dispatch of each generated-commands sequence: 64 words per workgroup from `offset`,
// each word `tag + i`, so the host can tell which sequence wrote which word.
layout(local_size_x = 64) in;
layout(std430, set = 0, binding = 0) buffer Data { uint data[]; };
layout(push_constant) uniform Push { uint offset; uint tag; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    data[offset + i] = tag + i;
}
