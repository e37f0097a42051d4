//! Shader modules of the SPIR-V committed under `shaders/` (read with `include_bytes!`).

use ash::vk;

use super::{check, Device, Result};

/// The SPIR-V words of `bytes` (a `.spv` file; `include_bytes!` gives no alignment, so the
/// words are copied out).
pub fn spirv(bytes: &[u8]) -> Result<Vec<u32>> {
    ash::util::read_spv(&mut std::io::Cursor::new(bytes)).map_err(|e| e.to_string())
}

/// A shader module of the SPIR-V in `bytes`.
pub fn shader_module(dev: &Device, bytes: &[u8]) -> Result<vk::ShaderModule> {
    let code = spirv(bytes)?;
    let info = vk::ShaderModuleCreateInfo::default().code(&code);
    // SAFETY: a valid create info on a live device; the code outlives the call.
    check(
        unsafe { dev.device.create_shader_module(&info, None) },
        "vkCreateShaderModule",
    )
}

/// One shader module per SPIR-V file, in order; if one fails, those made before it are
/// destroyed.
pub fn shader_modules(dev: &Device, files: &[&[u8]]) -> Result<Vec<vk::ShaderModule>> {
    let mut modules = Vec::with_capacity(files.len());
    for bytes in files {
        match shader_module(dev, bytes) {
            Ok(m) => modules.push(m),
            Err(e) => {
                destroy_shader_modules(dev, &modules);
                return Err(e);
            }
        }
    }
    Ok(modules)
}

/// Destroys `modules` (once no pipeline is being created from them: a pipeline does not
/// need its modules after creation).
pub fn destroy_shader_modules(dev: &Device, modules: &[vk::ShaderModule]) {
    for &m in modules {
        // SAFETY: a module of this device, used by no pipeline creation in progress.
        unsafe { dev.device.destroy_shader_module(m, None) };
    }
}
