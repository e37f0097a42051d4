#version 450
// The shape layer's GPU side (tests/fault-layer): turns the driver's nanosecond timestamps,
// just copied by vkCmdCopyQueryPoolResults, into the ticks of the emulated hardware, in
// place, and logs each (ticks, nanoseconds) pair for the tests. The same arithmetic as the
// layer's CPU side, in 32-bit words (no shaderInt64 needed):
//   ticks = (((ns - base) * multiplier) >> 32) + offset, masked to the valid bits.
layout(local_size_x = 64) in;

layout(set = 0, binding = 0) buffer Results { uint words[]; } results;
layout(set = 0, binding = 1) buffer Log { uint count; uint capacity; uint pad0; uint pad1; uint pairs[]; } shape_log;

layout(push_constant) uniform Shape {
    uint first_word;   // dstOffset / 4
    uint count;        // queries copied
    uint stride_words; // stride / 4
    uint availability; // 1: a 64-bit availability word follows each value
    uint base_lo; uint base_hi;
    uint offset_lo; uint offset_hi;
    uint mask_lo; uint mask_hi;
    uint multiplier;
} shape;

void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= shape.count) {
        return;
    }
    uint w = shape.first_word + i * shape.stride_words;
    if (shape.availability != 0 && results.words[w + 2] == 0 && results.words[w + 3] == 0) {
        return; // not written: nothing to shape
    }
    uint ns_lo = results.words[w];
    uint ns_hi = results.words[w + 1];
    // rel = ns - base, saturating at 0.
    uint borrow;
    uint rel_lo = usubBorrow(ns_lo, shape.base_lo, borrow);
    uint rel_hi = ns_hi - shape.base_hi - borrow;
    if (ns_hi < shape.base_hi || (ns_hi == shape.base_hi && ns_lo < shape.base_lo)) {
        rel_lo = 0;
        rel_hi = 0;
    }
    // (rel * multiplier) >> 32 = rel_hi * multiplier + ((rel_lo * multiplier) >> 32)
    uint lo_msb, lo_lsb, hi_msb, hi_lsb;
    umulExtended(rel_lo, shape.multiplier, lo_msb, lo_lsb);
    umulExtended(rel_hi, shape.multiplier, hi_msb, hi_lsb);
    uint carry;
    uint t_lo = uaddCarry(hi_lsb, lo_msb, carry);
    uint t_hi = hi_msb + carry;
    t_lo = uaddCarry(t_lo, shape.offset_lo, carry);
    t_hi = t_hi + shape.offset_hi + carry;
    t_lo &= shape.mask_lo;
    t_hi &= shape.mask_hi;
    results.words[w] = t_lo;
    results.words[w + 1] = t_hi;
    uint slot = atomicAdd(shape_log.count, 1);
    if (slot < shape_log.capacity) {
        shape_log.pairs[slot * 4] = t_lo;
        shape_log.pairs[slot * 4 + 1] = t_hi;
        shape_log.pairs[slot * 4 + 2] = ns_lo;
        shape_log.pairs[slot * 4 + 3] = ns_hi;
    }
}
