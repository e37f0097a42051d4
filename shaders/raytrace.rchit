#version 460
#extension GL_EXT_ray_tracing : require

// A hit names what it hit: instance custom index + 1 in bits 0-3, the geometry of the
// bottom-level structure in bits 4-7, the triangle within that geometry in bits 8-15.
layout(location = 0) rayPayloadInEXT uint value;

void main() {
    value = uint(gl_InstanceCustomIndexEXT + 1) | (uint(gl_GeometryIndexEXT) << 4)
          | (uint(gl_PrimitiveID) << 8);
}
