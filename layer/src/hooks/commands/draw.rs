//! Draws: each bracketed by `start_<kind>` / `end_<kind>`.

use ash::vk;
use ash::vk::Handle;

use super::bracketed;
use crate::trace::tracepoints::*;

bracketed! {
    /// `vkCmdDraw`.
    cmd_draw(cb, vertex_count: u32, instance_count: u32, first_vertex: u32, first_instance: u32) = core cmd_draw;
    switch toggle::DRAW;
    bracket draw |t| (vertex_count, instance_count, first_vertex, first_instance, t.pipelines.graphics);
    counted Graphics;
}

bracketed! {
    /// `vkCmdDrawIndexed`.
    cmd_draw_indexed(cb, index_count: u32, instance_count: u32, first_index: u32, vertex_offset: i32, first_instance: u32) = core cmd_draw_indexed;
    switch toggle::DRAW_INDEXED;
    bracket draw_indexed |t| (index_count, instance_count, first_index, vertex_offset, first_instance, t.pipelines.graphics);
    counted Graphics;
}

bracketed! {
    /// `vkCmdDrawIndirect`.
    cmd_draw_indirect(cb, buffer: vk::Buffer, offset: u64, draw_count: u32, stride: u32) = core cmd_draw_indirect;
    switch toggle::DRAW_INDIRECT;
    bracket draw_indirect |t| (false, buffer.as_raw(), offset, draw_count, stride, t.pipelines.graphics);
    counted Graphics;
}

bracketed! {
    /// `vkCmdDrawIndexedIndirect`.
    cmd_draw_indexed_indirect(cb, buffer: vk::Buffer, offset: u64, draw_count: u32, stride: u32) = core cmd_draw_indexed_indirect;
    switch toggle::DRAW_INDIRECT;
    bracket draw_indirect |t| (true, buffer.as_raw(), offset, draw_count, stride, t.pipelines.graphics);
    counted Graphics;
}

bracketed! {
    /// `vkCmdDrawIndirectCount` (and its KHR and AMD aliases).
    cmd_draw_indirect_count(cb, buffer: vk::Buffer, offset: u64, count_buffer: vk::Buffer, count_offset: u64, max_draw_count: u32, stride: u32) = ext cmd_draw_indirect_count;
    switch toggle::DRAW_INDIRECT_COUNT;
    bracket draw_indirect_count |t| (false, buffer.as_raw(), offset, count_buffer.as_raw(), count_offset, max_draw_count, stride, t.pipelines.graphics);
    counted Graphics;
}

bracketed! {
    /// `vkCmdDrawIndexedIndirectCount` (and its KHR and AMD aliases).
    cmd_draw_indexed_indirect_count(cb, buffer: vk::Buffer, offset: u64, count_buffer: vk::Buffer, count_offset: u64, max_draw_count: u32, stride: u32) = ext cmd_draw_indexed_indirect_count;
    switch toggle::DRAW_INDIRECT_COUNT;
    bracket draw_indirect_count |t| (true, buffer.as_raw(), offset, count_buffer.as_raw(), count_offset, max_draw_count, stride, t.pipelines.graphics);
    counted Graphics;
}

bracketed! {
    /// `vkCmdDrawMultiEXT`.
    cmd_draw_multi(cb, draw_count: u32, p_vertex_info: *const vk::MultiDrawInfoEXT, instance_count: u32, first_instance: u32, stride: u32) = ext cmd_draw_multi;
    switch toggle::DRAW_MULTI;
    bracket draw_multi |t| (false, draw_count, instance_count, first_instance, t.pipelines.graphics);
    counted Graphics;
}

bracketed! {
    /// `vkCmdDrawMultiIndexedEXT`.
    cmd_draw_multi_indexed(cb, draw_count: u32, p_index_info: *const vk::MultiDrawIndexedInfoEXT, instance_count: u32, first_instance: u32, stride: u32, p_vertex_offset: *const i32) = ext cmd_draw_multi_indexed;
    switch toggle::DRAW_MULTI;
    bracket draw_multi |t| (true, draw_count, instance_count, first_instance, t.pipelines.graphics);
    counted Graphics;
}

bracketed! {
    /// `vkCmdDrawMeshTasksEXT`.
    cmd_draw_mesh_tasks(cb, group_count_x: u32, group_count_y: u32, group_count_z: u32) = ext cmd_draw_mesh_tasks;
    switch toggle::DRAW_MESH_TASKS;
    bracket draw_mesh_tasks |t| (group_count_x, group_count_y, group_count_z, 0, 0, 1, 0, t.pipelines.graphics);
    counted Graphics;
}

bracketed! {
    /// `vkCmdDrawMeshTasksIndirectEXT`.
    cmd_draw_mesh_tasks_indirect(cb, buffer: vk::Buffer, offset: u64, draw_count: u32, stride: u32) = ext cmd_draw_mesh_tasks_indirect;
    switch toggle::DRAW_MESH_TASKS;
    bracket draw_mesh_tasks |t| (0, 0, 0, buffer.as_raw(), offset, draw_count, stride, t.pipelines.graphics);
    counted Graphics;
}

bracketed! {
    /// `vkCmdDrawMeshTasksIndirectCountEXT` (`draw_count` is the maximum).
    cmd_draw_mesh_tasks_indirect_count(cb, buffer: vk::Buffer, offset: u64, count_buffer: vk::Buffer, count_offset: u64, max_draw_count: u32, stride: u32) = ext cmd_draw_mesh_tasks_indirect_count;
    switch toggle::DRAW_MESH_TASKS;
    bracket draw_mesh_tasks |t| (0, 0, 0, buffer.as_raw(), offset, max_draw_count, stride, t.pipelines.graphics);
    counted Graphics;
}
