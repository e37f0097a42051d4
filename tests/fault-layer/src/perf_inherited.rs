//! `UTRACE_PERF_QUERY=1`, or `UTRACE_INHERITED_QUERIES=1` alone: `inheritedQueries`, which
//! every desktop driver offers (radv, anv, turnip, NVIDIA) and Lavapipe does not. Offered
//! in the features; kept above the driver at `vkCreateDevice`. The emulated performance
//! queries stay above the driver too; a pipeline statistics query active across a
//! `vkCmdExecuteCommands` does reach it, which Lavapipe counts as any other (it runs a
//! secondary's commands inline): a validation layer above this one sees the feature on.

use std::sync::OnceLock;

use ash::vk;

/// Whether `inheritedQueries` is offered (for the emulated performance queries, or alone).
pub fn enabled() -> bool {
    static ON: OnceLock<bool> = OnceLock::new();
    *ON.get_or_init(|| {
        crate::perf_query::enabled()
            || std::env::var("UTRACE_INHERITED_QUERIES").as_deref() == Ok("1")
    })
}

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
