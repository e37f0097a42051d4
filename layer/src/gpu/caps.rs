//! What a device can time, read once at `vkCreateDevice`.

use ash::vk;

use crate::loader::dispatch::InstanceDispatch;

#[derive(Clone, Debug)]
pub struct FamilyCaps {
    pub flags: vk::QueueFlags,
    pub timestamp_valid_bits: u32,
}

#[derive(Clone)]
pub struct DeviceCaps {
    /// Nanoseconds per timestamp tick.
    pub timestamp_period: f32,
    pub families: Vec<FamilyCaps>,
    pub memory: vk::PhysicalDeviceMemoryProperties,
    pub api_version: u32,
    pub device_type: vk::PhysicalDeviceType,
    pub device_name: String,
    pub vendor_id: u32,
    pub device_id: u32,
    /// `driverVersion`, in the vendor's own encoding.
    pub driver_version: u32,
    /// `VkPhysicalDeviceDriverProperties::driverName` and `driverInfo` (empty where they
    /// could not be asked: a device before Vulkan 1.2, or an instance without
    /// `vkGetPhysicalDeviceProperties2`).
    pub driver_name: String,
    pub driver_info: String,
}

/// `VK_VENDOR_ID_MESA`: the vendor id of Mesa's software drivers (Lavapipe).
const VENDOR_MESA: u32 = 0x10005;

/// The device's `driverName` and `driverInfo`, where the instance and the device allow
/// asking (Vulkan 1.2).
///
/// # Safety
/// `physical_device` must belong to `instance`.
unsafe fn driver_properties(
    instance: &InstanceDispatch,
    physical_device: vk::PhysicalDevice,
    api_version: u32,
) -> (String, String) {
    let Some(properties2) = instance.get_physical_device_properties2 else {
        return Default::default();
    };
    if api_version < vk::API_VERSION_1_2 {
        return Default::default();
    }
    let mut driver = vk::PhysicalDeviceDriverProperties::default();
    let mut props = vk::PhysicalDeviceProperties2::default().push_next(&mut driver);
    // SAFETY: the instance allows the call (`InstanceDispatch::load`); a 1.2 device knows
    // the chained structure, which lives across the call.
    unsafe { properties2(physical_device, &mut props) };
    let text = |s: Result<&std::ffi::CStr, _>| {
        s.map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    (
        text(driver.driver_name_as_c_str()),
        text(driver.driver_info_as_c_str()),
    )
}

/// Mesa's major version from a `driverInfo` such as "Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6)".
fn mesa_major(info: &str) -> Option<u32> {
    let version = info.strip_prefix("Mesa ")?;
    version.split('.').next()?.parse().ok()
}

impl DeviceCaps {
    /// # Safety
    /// `physical_device` must belong to `instance`.
    pub unsafe fn query(instance: &InstanceDispatch, physical_device: vk::PhysicalDevice) -> Self {
        let fp = &instance.fp_v1_0;
        let mut props = vk::PhysicalDeviceProperties::default();
        let mut memory = vk::PhysicalDeviceMemoryProperties::default();
        let mut count = 0u32;
        // SAFETY: core 1.0 queries on a live physical device, with the two-call idiom.
        let families = unsafe {
            (fp.get_physical_device_properties)(physical_device, &mut props);
            (fp.get_physical_device_memory_properties)(physical_device, &mut memory);
            (fp.get_physical_device_queue_family_properties)(
                physical_device,
                &mut count,
                std::ptr::null_mut(),
            );
            let mut families = vec![vk::QueueFamilyProperties::default(); count as usize];
            (fp.get_physical_device_queue_family_properties)(
                physical_device,
                &mut count,
                families.as_mut_ptr(),
            );
            families.truncate(count as usize);
            families
        };
        // SAFETY: as above.
        let (driver_name, driver_info) =
            unsafe { driver_properties(instance, physical_device, props.api_version) };
        DeviceCaps {
            timestamp_period: props.limits.timestamp_period,
            families: families
                .iter()
                .map(|f| FamilyCaps {
                    flags: f.queue_flags,
                    timestamp_valid_bits: f.timestamp_valid_bits,
                })
                .collect(),
            memory,
            api_version: props.api_version,
            device_type: props.device_type,
            device_name: props
                .device_name_as_c_str()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            vendor_id: props.vendor_id,
            device_id: props.device_id,
            driver_version: props.driver_version,
            driver_name,
            driver_info,
        }
    }

    /// Whether a query used in a multiview subpass makes all its consecutive queries (one
    /// per view) available, as Vulkan says it must. Lavapipe 22.3 leaves all but the first
    /// unavailable (a read says NOT_READY, a copy that waits for them never ends); 25.0
    /// makes them all available (the total in the first, 0 in the others). Lavapipe before
    /// 25 (the versions between were not tried), or whose version is unknown (its
    /// `driverVersion` is 0.0.1; the version is in `driverInfo`), is taken to be 22.3's.
    pub fn multiview_queries_complete(&self) -> bool {
        let lavapipe =
            self.vendor_id == VENDOR_MESA && self.device_type == vk::PhysicalDeviceType::CPU;
        !lavapipe || mesa_major(&self.driver_info).is_some_and(|major| major >= 25)
    }

    /// Whether command buffers of `family` get tracepoints.
    pub fn family_traceable(&self, family: u32) -> bool {
        self.families
            .get(family as usize)
            .is_some_and(|f| family_traceable(f.flags, f.timestamp_valid_bits))
    }

    pub fn timestamp_mask(&self, family: u32) -> u64 {
        self.families
            .get(family as usize)
            .map_or(0, |f| timestamp_mask(f.timestamp_valid_bits))
    }
}

/// A family is traced when it has timestamps at all and can run the layer's own
/// `vkCmdResetQueryPool`/`vkCmdCopyQueryPoolResults` (graphics or compute queues).
pub fn family_traceable(flags: vk::QueueFlags, timestamp_valid_bits: u32) -> bool {
    timestamp_valid_bits > 0 && flags.intersects(vk::QueueFlags::GRAPHICS | vk::QueueFlags::COMPUTE)
}

/// The bits of a raw timestamp that hold time (`1 << 64` would overflow, hence the shift).
pub fn timestamp_mask(valid_bits: u32) -> u64 {
    match valid_bits {
        0 => 0,
        64.. => u64::MAX,
        bits => u64::MAX >> (64 - bits),
    }
}

/// Converts ticks to nanoseconds with `timestampPeriod`, in 32.32 fixed point so that large
/// tick counts keep nanosecond precision (an `f64` product would not past 2^53).
pub fn ticks_to_ns(ticks: u64, period: f32) -> u64 {
    if period == 1.0 {
        return ticks;
    }
    let fixed = (f64::from(period) * 4_294_967_296.0).round() as u128;
    ((u128::from(ticks) * fixed) >> 32).min(u128::from(u64::MAX)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lavapipe_before_25_is_taken_to_leave_multiview_queries_unavailable() {
        let caps = |vendor_id, device_type, info: &str| DeviceCaps {
            timestamp_period: 1.0,
            families: Vec::new(),
            memory: vk::PhysicalDeviceMemoryProperties::default(),
            api_version: 0,
            device_type,
            device_name: String::new(),
            vendor_id,
            device_id: 0,
            driver_version: 0,
            driver_name: String::new(),
            driver_info: info.to_string(),
        };
        let cpu = vk::PhysicalDeviceType::CPU;
        let info = "Mesa 22.3.6 (LLVM 15.0.6)";
        assert!(!caps(VENDOR_MESA, cpu, info).multiview_queries_complete());
        assert!(!caps(VENDOR_MESA, cpu, "").multiview_queries_complete());
        let info = "Mesa 25.0.7-2~bpo12+1 (LLVM 15.0.6)";
        assert!(caps(VENDOR_MESA, cpu, info).multiview_queries_complete());
        let gpu = vk::PhysicalDeviceType::DISCRETE_GPU;
        assert!(caps(0x1002, gpu, "").multiview_queries_complete());
    }

    #[test]
    fn families_without_timestamps_get_no_tracepoints() {
        assert!(!family_traceable(vk::QueueFlags::GRAPHICS, 0));
        assert!(family_traceable(vk::QueueFlags::COMPUTE, 36));
        assert!(!family_traceable(vk::QueueFlags::TRANSFER, 64));
        assert!(!family_traceable(vk::QueueFlags::SPARSE_BINDING, 64));
    }

    #[test]
    fn masks() {
        assert_eq!(timestamp_mask(0), 0);
        assert_eq!(timestamp_mask(36), (1u64 << 36) - 1);
        assert_eq!(timestamp_mask(64), u64::MAX);
    }

    #[test]
    fn tick_conversion_keeps_precision() {
        assert_eq!(ticks_to_ns(123_456_789_012_345, 1.0), 123_456_789_012_345);
        assert_eq!(ticks_to_ns(1_000, 52.083332), 52_083);
        assert_eq!(ticks_to_ns(3, 0.5), 1);
        // 2^62 ticks of 10 ns each do not fit in u64 ns: saturate rather than wrap.
        assert_eq!(ticks_to_ns(1 << 62, 10.0), u64::MAX);
    }
}
