//! A descriptor set holding one buffer, the binding most of the workload's pipelines need
//! (a storage buffer to fill, a uniform buffer of constants).

use ash::vk;

use super::{check, Buffer, Device, Result};

/// A set layout with one buffer at binding 0, a pool of its own, and one set from it
/// pointing at the whole buffer.
pub struct BufferSet {
    pub layout: vk::DescriptorSetLayout,
    pool: vk::DescriptorPool,
    pub set: vk::DescriptorSet,
}

impl BufferSet {
    /// `buffer` bound as a `ty` descriptor (e.g. STORAGE_BUFFER) visible to `stages`.
    pub fn new(
        dev: &Device,
        ty: vk::DescriptorType,
        stages: vk::ShaderStageFlags,
        buffer: &Buffer,
    ) -> Result<BufferSet> {
        let d = &dev.device;
        let binding = [vk::DescriptorSetLayoutBinding::default()
            .binding(0)
            .descriptor_type(ty)
            .descriptor_count(1)
            .stage_flags(stages)];
        let layout_info = vk::DescriptorSetLayoutCreateInfo::default().bindings(&binding);
        // SAFETY: a valid create info on a live device.
        let layout = check(
            unsafe { d.create_descriptor_set_layout(&layout_info, None) },
            "vkCreateDescriptorSetLayout",
        )?;
        let sizes = [vk::DescriptorPoolSize::default().ty(ty).descriptor_count(1)];
        let pool_info = vk::DescriptorPoolCreateInfo::default()
            .max_sets(1)
            .pool_sizes(&sizes);
        // SAFETY: as above.
        let pool = match check(
            unsafe { d.create_descriptor_pool(&pool_info, None) },
            "vkCreateDescriptorPool",
        ) {
            Ok(p) => p,
            Err(e) => {
                // SAFETY: the layout is used by nothing yet.
                unsafe { d.destroy_descriptor_set_layout(layout, None) };
                return Err(e);
            }
        };
        let made = BufferSet {
            layout,
            pool,
            set: vk::DescriptorSet::null(),
        };
        let layouts = [layout];
        let alloc = vk::DescriptorSetAllocateInfo::default()
            .descriptor_pool(pool)
            .set_layouts(&layouts);
        // SAFETY: the pool has room for this one set of this layout.
        let set = match check(
            unsafe { d.allocate_descriptor_sets(&alloc) },
            "vkAllocateDescriptorSets",
        ) {
            Ok(sets) => sets[0],
            Err(e) => {
                made.destroy(dev);
                return Err(e);
            }
        };
        let buffer_info = [vk::DescriptorBufferInfo::default()
            .buffer(buffer.buffer)
            .range(vk::WHOLE_SIZE)];
        let write = vk::WriteDescriptorSet::default()
            .dst_set(set)
            .dst_binding(0)
            .descriptor_type(ty)
            .buffer_info(&buffer_info);
        // SAFETY: a live set no command buffer uses yet, a live buffer of the usage `ty`
        // needs (the caller made it so).
        unsafe { d.update_descriptor_sets(&[write], &[]) };
        Ok(BufferSet { set, ..made })
    }

    pub fn destroy(self, dev: &Device) {
        // SAFETY: no pending work uses the set (it goes with its pool).
        unsafe {
            dev.device.destroy_descriptor_pool(self.pool, None);
            dev.device.destroy_descriptor_set_layout(self.layout, None);
        }
    }
}
