//! `UTRACE_PERF_QUERY=1`: `inheritedQueries`, which every driver with hardware counters
//! offers (radv, anv, turnip, NVIDIA) and Lavapipe does not. Offered in the features; kept
//! above the driver at `vkCreateDevice`, where the emulated performance queries stay too
//! (none is ever active down there across a `vkCmdExecuteCommands`).

use ash::vk;

pub unsafe extern "system" fn get_physical_device_features(
    physical: vk::PhysicalDevice,
    features: *mut vk::PhysicalDeviceFeatures,
) {
    instance_down!(
        physical,
        c"vkGetPhysicalDeviceFeatures",
        vk::PFN_vkGetPhysicalDeviceFeatures,
        (physical, features)
    );
    // SAFETY: the caller's output structure, just filled.
    unsafe { (*features).inherited_queries = vk::TRUE };
}

/// Offers the feature in a `VkPhysicalDeviceFeatures2` the driver just filled.
///
/// # Safety
/// `features` is the caller's valid output structure.
pub unsafe fn offer(features: *mut vk::PhysicalDeviceFeatures2<'_>) {
    // SAFETY: the caller's promise.
    unsafe { (*features).features.inherited_queries = vk::TRUE };
}

/// What [`hide`] changed, put back by [`Hidden::restore`] once the driver has had the call.
pub struct Hidden {
    /// The copy of `pEnabledFeatures` passed down, kept alive for the call.
    _copy: Option<Box<vk::PhysicalDeviceFeatures>>,
    /// A `VkPhysicalDeviceFeatures2` of the chain whose feature was turned off.
    in_chain: Option<*mut vk::PhysicalDeviceFeatures2<'static>>,
}

impl Hidden {
    pub fn restore(self) {
        if let Some(f) = self.in_chain {
            // SAFETY: the caller's structure `hide` changed, alive during vkCreateDevice.
            unsafe { (*f).features.inherited_queries = vk::TRUE };
        }
    }
}

/// Turns `inheritedQueries` off in what goes down: in a copy of `pEnabledFeatures`, or for
/// the call's length in the chain's `VkPhysicalDeviceFeatures2` (a test layer's liberty).
///
/// # Safety
/// `info`'s pointers and chain are valid.
pub unsafe fn hide(info: &mut vk::DeviceCreateInfo<'_>) -> Hidden {
    // SAFETY: the caller's promise.
    unsafe {
        if let Some(f) = info.p_enabled_features.as_ref() {
            if f.inherited_queries == vk::FALSE {
                return Hidden {
                    _copy: None,
                    in_chain: None,
                };
            }
            let copy = Box::new(vk::PhysicalDeviceFeatures {
                inherited_queries: vk::FALSE,
                ..*f
            });
            info.p_enabled_features = &*copy;
            return Hidden {
                _copy: Some(copy),
                in_chain: None,
            };
        }
        let mut next = info
            .p_next
            .cast_mut()
            .cast::<vk::BaseOutStructure<'static>>();
        while !next.is_null() {
            if (*next).s_type == vk::StructureType::PHYSICAL_DEVICE_FEATURES_2 {
                let f = next.cast::<vk::PhysicalDeviceFeatures2<'static>>();
                if (*f).features.inherited_queries == vk::TRUE {
                    (*f).features.inherited_queries = vk::FALSE;
                    return Hidden {
                        _copy: None,
                        in_chain: Some(f),
                    };
                }
                break;
            }
            next = (*next).p_next;
        }
    }
    Hidden {
        _copy: None,
        in_chain: None,
    }
}
