#version 460
#extension GL_EXT_ray_tracing : require

// A ray that hits nothing leaves 0.
layout(location = 0) rayPayloadInEXT uint value;

void main() {
    value = 0u;
}
