//! The `conditional_rendering` scenario (not written yet).

use crate::submitter::Submitter;
use crate::vk::{Device, Instance, Result};

pub fn device(_inst: &Instance) -> Result<Device> {
    Err("the conditional_rendering scenario is not written yet".into())
}

pub fn run(_inst: &Instance, _dev: &Device, _sub: &mut Submitter) -> Result<bool> {
    Err("the conditional_rendering scenario is not written yet".into())
}
