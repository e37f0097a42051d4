//! Shallow copies of the first structures of an application's `pNext` chain, up to the
//! ones the layer needs to change (`VkPhysicalDeviceVulkan12Features` and
//! `VkPhysicalDeviceFeatures2`, whose feature bits can only be set there once the
//! application chains them). The application's memory is never written:
//! the layer passes down its own copies, linked on to the rest of the application's chain.
//! Each copy keeps every field of its original, pointers included (they point to the
//! application's data, alive for the call). A structure of a type the layer does not know
//! the size of cannot be copied; the layer then leaves the chain alone.

use std::ffi::c_void;

use ash::vk;

/// Copies of the chain's first structures, the last one of a type asked for.
pub struct CopiedPrefix {
    /// 8-byte aligned storage of each copy, in chain order; boxes never move.
    nodes: Vec<Box<[u64]>>,
    /// The structure type of each copy.
    types: Vec<vk::StructureType>,
}

impl CopiedPrefix {
    /// Copies the structures from `head` up to the first of type `target`. `None` when
    /// there is none, or a structure before it is of a type the layer does not know.
    ///
    /// # Safety
    /// `head` is a valid chain of input structures (or null).
    pub unsafe fn new(head: *const c_void, target: vk::StructureType) -> Option<CopiedPrefix> {
        // SAFETY: forwarded from the caller.
        unsafe { Self::through(head, &[target]) }
    }

    /// Copies the structures from `head` up to the last one (in chain order) of any type
    /// of `targets` that the chain holds. `None` when it holds none, or a structure before
    /// the last is of a type the layer does not know.
    ///
    /// # Safety
    /// `head` is a valid chain of input structures (or null).
    pub unsafe fn through(
        head: *const c_void,
        targets: &[vk::StructureType],
    ) -> Option<CopiedPrefix> {
        // How far to copy: the position of the last target in the chain.
        let mut last = None;
        let mut next = head.cast::<vk::BaseInStructure>();
        let mut position = 0;
        while !next.is_null() {
            // SAFETY: every element of a valid chain starts with sType/pNext.
            let s_type = unsafe { (*next).s_type };
            if targets.contains(&s_type) {
                last = Some(position);
            }
            position += 1;
            // SAFETY: as above.
            next = unsafe { (*next).p_next };
        }
        let last = last?;
        let mut nodes: Vec<Box<[u64]>> = Vec::new();
        let mut types = Vec::new();
        let mut next = head.cast::<vk::BaseInStructure>();
        for _ in 0..=last {
            // SAFETY: as above; the chain holds more than `last` structures.
            let s_type = unsafe { (*next).s_type };
            let size = known_size(s_type)?;
            let mut copy = vec![0u64; size.div_ceil(8)].into_boxed_slice();
            // SAFETY: the structure is `size` bytes long (its type says so) and the copy has
            // room for them.
            unsafe {
                std::ptr::copy_nonoverlapping(next.cast::<u8>(), copy.as_mut_ptr().cast(), size)
            };
            nodes.push(copy);
            types.push(s_type);
            // SAFETY: as above.
            next = unsafe { (*next).p_next };
        }
        let mut prefix = CopiedPrefix { nodes, types };
        prefix.link();
        Some(prefix)
    }

    /// Each copy points to the next copy; the last keeps its original's `pNext`.
    fn link(&mut self) {
        for i in 1..self.nodes.len() {
            let next = self.nodes[i].as_ptr();
            let node = self.nodes[i - 1]
                .as_mut_ptr()
                .cast::<vk::BaseOutStructure>();
            // SAFETY: the node is a copy of a structure starting with sType/pNext.
            unsafe { (*node).p_next = next.cast_mut().cast() };
        }
    }

    /// The first copy, to chain in place of the application's first structure.
    pub fn head(&self) -> *const c_void {
        self.nodes
            .first()
            .map_or(std::ptr::null(), |n| n.as_ptr().cast())
    }

    /// The copy of the first structure of type `s_type`, if the prefix holds one.
    ///
    /// # Safety
    /// `T` is the structure type `s_type` names.
    pub unsafe fn find_mut<T>(&mut self, s_type: vk::StructureType) -> Option<&mut T> {
        let i = self.types.iter().position(|&t| t == s_type)?;
        let node = &mut self.nodes[i];
        debug_assert!(node.len() * 8 >= std::mem::size_of::<T>());
        // SAFETY: the copy holds a `T` (the caller's promise), 8-byte aligned.
        Some(unsafe { &mut *node.as_mut_ptr().cast::<T>() })
    }
}

/// Sizes of the structures an application commonly chains to `VkDeviceCreateInfo` next to
/// `VkPhysicalDeviceVulkan12Features`.
fn known_size(s_type: vk::StructureType) -> Option<usize> {
    use std::mem::size_of;
    use vk::StructureType as S;
    Some(match s_type {
        // The loader's own elements (layer link, loader data callback) come first: copies
        // serve the layers below as well as the originals (each reads its element during
        // the call, and advances the link in the copy it is given).
        S::LOADER_DEVICE_CREATE_INFO => size_of::<ash_layer::LayerDeviceCreateInfo>(),
        S::PHYSICAL_DEVICE_FEATURES_2 => size_of::<vk::PhysicalDeviceFeatures2>(),
        S::PHYSICAL_DEVICE_VULKAN_1_1_FEATURES => size_of::<vk::PhysicalDeviceVulkan11Features>(),
        S::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES => size_of::<vk::PhysicalDeviceVulkan12Features>(),
        S::PHYSICAL_DEVICE_VULKAN_1_3_FEATURES => size_of::<vk::PhysicalDeviceVulkan13Features>(),
        S::PHYSICAL_DEVICE_MULTI_DRAW_FEATURES_EXT => {
            size_of::<vk::PhysicalDeviceMultiDrawFeaturesEXT>()
        }
        S::PHYSICAL_DEVICE_MESH_SHADER_FEATURES_EXT => {
            size_of::<vk::PhysicalDeviceMeshShaderFeaturesEXT>()
        }
        S::PHYSICAL_DEVICE_PERFORMANCE_QUERY_FEATURES_KHR => {
            size_of::<vk::PhysicalDevicePerformanceQueryFeaturesKHR>()
        }
        S::PHYSICAL_DEVICE_ACCELERATION_STRUCTURE_FEATURES_KHR => {
            size_of::<vk::PhysicalDeviceAccelerationStructureFeaturesKHR>()
        }
        S::PHYSICAL_DEVICE_RAY_TRACING_PIPELINE_FEATURES_KHR => {
            size_of::<vk::PhysicalDeviceRayTracingPipelineFeaturesKHR>()
        }
        S::PHYSICAL_DEVICE_RAY_QUERY_FEATURES_KHR => {
            size_of::<vk::PhysicalDeviceRayQueryFeaturesKHR>()
        }
        S::PHYSICAL_DEVICE_DESCRIPTOR_BUFFER_FEATURES_EXT => {
            size_of::<vk::PhysicalDeviceDescriptorBufferFeaturesEXT>()
        }
        S::PHYSICAL_DEVICE_EXTENDED_DYNAMIC_STATE_3_FEATURES_EXT => {
            size_of::<vk::PhysicalDeviceExtendedDynamicState3FeaturesEXT>()
        }
        S::PHYSICAL_DEVICE_ROBUSTNESS_2_FEATURES_EXT => {
            size_of::<vk::PhysicalDeviceRobustness2FeaturesEXT>()
        }
        S::PHYSICAL_DEVICE_FRAGMENT_SHADING_RATE_FEATURES_KHR => {
            size_of::<vk::PhysicalDeviceFragmentShadingRateFeaturesKHR>()
        }
        S::DEVICE_DEVICE_MEMORY_REPORT_CREATE_INFO_EXT => {
            size_of::<vk::DeviceDeviceMemoryReportCreateInfoEXT>()
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_copy_ends_at_the_target_and_links_on_to_the_rest() {
        let mut v11 = vk::PhysicalDeviceVulkan11Features::default().multiview(true);
        let v11_ptr: *const vk::PhysicalDeviceVulkan11Features = &v11;
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default().timeline_semaphore(true);
        let mut v13 = vk::PhysicalDeviceVulkan13Features::default().dynamic_rendering(true);
        // push_next prepends: the chain is v13 -> v12 -> v11.
        let info = vk::DeviceCreateInfo::default()
            .push_next(&mut v11)
            .push_next(&mut v12)
            .push_next(&mut v13);
        // SAFETY: a valid chain built above.
        let mut prefix = unsafe {
            CopiedPrefix::new(
                info.p_next,
                vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
            )
        }
        .expect("known structures up to the target");
        // SAFETY: the target is a Vulkan 1.2 features structure.
        let copy12 = unsafe {
            prefix.find_mut::<vk::PhysicalDeviceVulkan12Features>(
                vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
            )
        }
        .expect("a copy");
        copy12.host_query_reset = vk::TRUE;
        let copy12_ptr: *const vk::PhysicalDeviceVulkan12Features = copy12;
        // SAFETY: reading back the copies through their sTypes.
        unsafe {
            let head = &*prefix.head().cast::<vk::PhysicalDeviceVulkan13Features>();
            assert_eq!(head.dynamic_rendering, vk::TRUE);
            assert_ne!(
                head.p_next.cast_const(),
                info.p_next.cast::<c_void>().cast()
            );
            let second = &*head.p_next.cast::<vk::PhysicalDeviceVulkan12Features>();
            assert!(std::ptr::eq(second, copy12_ptr));
            assert_eq!(second.timeline_semaphore, vk::TRUE);
            assert_eq!(second.host_query_reset, vk::TRUE);
            // The rest is the application's own v11.
            assert_eq!(second.p_next.cast_const(), v11_ptr.cast());
        }
        // The application's structures are untouched.
        assert_eq!(v12.host_query_reset, vk::FALSE);
    }

    #[test]
    fn the_copy_goes_through_the_last_of_several_targets() {
        let mut f2 = vk::PhysicalDeviceFeatures2::default();
        let mut v11 = vk::PhysicalDeviceVulkan11Features::default();
        let v11_ptr: *const vk::PhysicalDeviceVulkan11Features = &v11;
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
        // The chain is v12 -> f2 -> v11.
        let info = vk::DeviceCreateInfo::default()
            .push_next(&mut v11)
            .push_next(&mut f2)
            .push_next(&mut v12);
        use vk::StructureType as S;
        // SAFETY: a valid chain built above.
        let mut prefix = unsafe {
            CopiedPrefix::through(
                info.p_next,
                &[
                    S::PHYSICAL_DEVICE_FEATURES_2,
                    S::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                ],
            )
        }
        .expect("known structures up to the targets");
        // SAFETY: each type asked for is the one its sType names.
        unsafe {
            let copy2 = prefix
                .find_mut::<vk::PhysicalDeviceFeatures2>(S::PHYSICAL_DEVICE_FEATURES_2)
                .expect("features 2 copied");
            copy2.features.pipeline_statistics_query = vk::TRUE;
            let copy12 = prefix
                .find_mut::<vk::PhysicalDeviceVulkan12Features>(
                    S::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
                )
                .expect("1.2 copied");
            copy12.host_query_reset = vk::TRUE;
            let head = &*prefix.head().cast::<vk::PhysicalDeviceVulkan12Features>();
            assert_eq!(head.host_query_reset, vk::TRUE);
            let second = &*head.p_next.cast::<vk::PhysicalDeviceFeatures2>();
            assert_eq!(second.features.pipeline_statistics_query, vk::TRUE);
            assert_eq!(second.p_next.cast_const(), v11_ptr.cast());
        }
        // SAFETY: as above.
        let none = unsafe {
            CopiedPrefix::through(info.p_next, &[S::PHYSICAL_DEVICE_VULKAN_1_3_FEATURES])
        };
        assert!(none.is_none());
        assert_eq!(f2.features.pipeline_statistics_query, vk::FALSE);
    }

    #[test]
    fn an_unknown_structure_before_the_target_is_not_copied() {
        let mut v12 = vk::PhysicalDeviceVulkan12Features::default();
        let mut unknown = vk::PhysicalDevicePresentIdFeaturesKHR::default();
        let info = vk::DeviceCreateInfo::default()
            .push_next(&mut v12)
            .push_next(&mut unknown);
        // SAFETY: a valid chain built above.
        let prefix = unsafe {
            CopiedPrefix::new(
                info.p_next,
                vk::StructureType::PHYSICAL_DEVICE_VULKAN_1_2_FEATURES,
            )
        };
        assert!(prefix.is_none());
    }
}
