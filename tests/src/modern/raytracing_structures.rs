//! The scene of the `raytracing` scenario and its acceleration structures: one bottom-level
//! structure of two triangle geometries (built, then compacted into a second one), and a
//! top-level structure of two instances of the compacted one (built, then updated in place).

use ash::vk;

use crate::vk::{check, Buffer, Device, Result};

/// The storage image's side, in pixels (one ray per pixel).
pub const SIZE: u32 = 64;

/// Geometry 0 (indexed): a 16x15 rectangle as two triangles. Pixel units, z = 0.
pub const RECTANGLE: [[i64; 2]; 4] = [[0, 0], [16, 0], [16, 15], [0, 15]];
pub const RECTANGLE_INDICES: [u32; 6] = [0, 1, 2, 0, 2, 3];
/// Geometry 1 (not indexed): one triangle beside the rectangle.
pub const TRIANGLE: [[i64; 2]; 3] = [[0, 18], [16, 18], [0, 27]];
/// Where the geometry buffer holds the triangle's vertices and the rectangle's indices (the
/// rectangle's vertices start it).
const TRIANGLE_OFFSET: u64 = 48;
const INDEX_OFFSET: u64 = 96;
const GEOMETRY_BYTES: u64 = 120;

/// Row-major 3x4 transforms of instances 0 and 1 (custom indices 0 and 1): instance 0 moved
/// by (4, 4); instance 1 turned a quarter turn and moved to (60, 36), one unit further along
/// the rays. Integer matrices keep every edge off the pixel centers (see
/// `raytracing_image.rs`).
pub const TRANSFORMS: [[[i64; 4]; 3]; 2] = [
    [[1, 0, 0, 4], [0, 1, 0, 4], [0, 0, 1, 0]],
    [[0, -1, 0, 60], [1, 0, 0, 36], [0, 0, 1, 1]],
];
const INSTANCE_BYTES: u64 = 64;

const BLAS_FLAGS: vk::BuildAccelerationStructureFlagsKHR =
    vk::BuildAccelerationStructureFlagsKHR::from_raw(
        vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE.as_raw()
            | vk::BuildAccelerationStructureFlagsKHR::ALLOW_COMPACTION.as_raw(),
    );
const TLAS_FLAGS: vk::BuildAccelerationStructureFlagsKHR =
    vk::BuildAccelerationStructureFlagsKHR::from_raw(
        vk::BuildAccelerationStructureFlagsKHR::PREFER_FAST_TRACE.as_raw()
            | vk::BuildAccelerationStructureFlagsKHR::ALLOW_UPDATE.as_raw(),
    );
/// Triangles per geometry of the bottom-level structure, and instances in the top-level one.
const BLAS_PRIMITIVES: [u32; 2] = [2, 1];
const TLAS_PRIMITIVES: [u32; 1] = [2];

/// An addressed buffer whose usable bytes start at an address aligned to `align` (scratch,
/// instance and shader-binding-table addresses have alignment rules of their own).
pub struct Aligned {
    pub buffer: Buffer,
    pub offset: u64,
    pub address: vk::DeviceAddress,
}

impl Aligned {
    pub fn new(dev: &Device, size: u64, usage: vk::BufferUsageFlags, align: u64) -> Result<Self> {
        let buffer = Buffer::addressed(dev, size + align, usage)?;
        let address = buffer.address.next_multiple_of(align);
        Ok(Aligned {
            offset: address - buffer.address,
            address,
            buffer,
        })
    }

    /// Copies `bytes` to `at` bytes past the aligned start.
    pub fn write(&self, at: u64, bytes: &[u8]) {
        assert!(self.offset + at + bytes.len() as u64 <= self.buffer.size);
        // SAFETY: the range is inside the mapping (asserted above), which nothing else
        // borrows; no pending GPU work reads it.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                self.buffer.mapped.add((self.offset + at) as usize),
                bytes.len(),
            )
        }
    }
}

/// Little-endian-native bytes of 32-bit words.
fn bytes(words: impl IntoIterator<Item = u32>) -> Vec<u8> {
    words.into_iter().flat_map(u32::to_ne_bytes).collect()
}

/// Vertices as x, y, z floats.
fn vertex_bytes(vertices: &[[i64; 2]]) -> Vec<u8> {
    bytes(
        vertices
            .iter()
            .flat_map(|v| [v[0] as f32, v[1] as f32, 0.0])
            .map(f32::to_bits),
    )
}

/// One acceleration structure and the buffer holding it.
pub struct Structure {
    pub handle: vk::AccelerationStructureKHR,
    pub address: vk::DeviceAddress,
    storage: Buffer,
}

impl Structure {
    fn new(
        dev: &Device,
        fns: &ash::khr::acceleration_structure::Device,
        ty: vk::AccelerationStructureTypeKHR,
        size: u64,
    ) -> Result<Structure> {
        let storage = Buffer::addressed(
            dev,
            size,
            vk::BufferUsageFlags::ACCELERATION_STRUCTURE_STORAGE_KHR,
        )?;
        let info = vk::AccelerationStructureCreateInfoKHR::default()
            .buffer(storage.buffer)
            .size(size)
            .ty(ty);
        // SAFETY: the buffer has ACCELERATION_STRUCTURE_STORAGE usage and `size` bytes from
        // offset 0; accelerationStructure is enabled.
        let handle = check(
            unsafe { fns.create_acceleration_structure(&info, None) },
            "vkCreateAccelerationStructureKHR",
        )?;
        let address_info =
            vk::AccelerationStructureDeviceAddressInfoKHR::default().acceleration_structure(handle);
        // SAFETY: a live acceleration structure of this device.
        let address = unsafe { fns.get_acceleration_structure_device_address(&address_info) };
        Ok(Structure {
            handle,
            address,
            storage,
        })
    }

    fn destroy(self, dev: &Device, fns: &ash::khr::acceleration_structure::Device) {
        // SAFETY: no pending work uses the structure; it goes before its buffer.
        unsafe { fns.destroy_acceleration_structure(self.handle, None) };
        self.storage.destroy(dev);
    }
}

/// The scene's input buffers and acceleration structures.
pub struct Scene {
    geometry: Aligned,
    instances: Aligned,
    scratch: Aligned,
    /// The bottom-level structure as built; gone once compacted.
    blas: Option<Structure>,
    /// Its compacted copy, which the instances reference.
    compact: Option<Structure>,
    pub tlas: Structure,
}

impl Scene {
    /// The inputs, the bottom- and top-level structures (not built) and one scratch buffer
    /// large enough for every build and update.
    pub fn new(
        dev: &Device,
        fns: &ash::khr::acceleration_structure::Device,
        scratch_alignment: u64,
    ) -> Result<Scene> {
        let input = vk::BufferUsageFlags::ACCELERATION_STRUCTURE_BUILD_INPUT_READ_ONLY_KHR;
        let geometry = Aligned::new(dev, GEOMETRY_BYTES, input, 16)?;
        geometry.write(0, &vertex_bytes(&RECTANGLE));
        geometry.write(TRIANGLE_OFFSET, &vertex_bytes(&TRIANGLE));
        geometry.write(INDEX_OFFSET, &bytes(RECTANGLE_INDICES));
        let instances = Aligned::new(dev, 2 * INSTANCE_BYTES, input, 16)?;
        let blas_geometries = blas_geometries(geometry.address);
        let blas_sizes = sizes(fns, &blas_info(&blas_geometries), &BLAS_PRIMITIVES);
        let tlas_geometries = tlas_geometries(instances.address);
        let tlas_sizes = sizes(fns, &tlas_info(&tlas_geometries), &TLAS_PRIMITIVES);
        let scratch_size = blas_sizes
            .build_scratch_size
            .max(tlas_sizes.build_scratch_size)
            .max(tlas_sizes.update_scratch_size);
        let scratch = Aligned::new(
            dev,
            scratch_size,
            vk::BufferUsageFlags::STORAGE_BUFFER,
            scratch_alignment,
        )?;
        let bottom = vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL;
        let blas = Structure::new(dev, fns, bottom, blas_sizes.acceleration_structure_size)?;
        let top = vk::AccelerationStructureTypeKHR::TOP_LEVEL;
        let tlas = Structure::new(dev, fns, top, tlas_sizes.acceleration_structure_size)?;
        Ok(Scene {
            geometry,
            instances,
            scratch,
            blas: Some(blas),
            compact: None,
            tlas,
        })
    }

    /// The bottom-level structure as built (to query its compacted size).
    pub fn blas(&self) -> Result<vk::AccelerationStructureKHR> {
        Ok(self.blas.as_ref().ok_or("the BLAS is gone")?.handle)
    }

    /// vkCmdBuildAccelerationStructuresKHR of the bottom-level structure (mode BUILD).
    pub fn record_blas_build(
        &self,
        fns: &ash::khr::acceleration_structure::Device,
        cb: vk::CommandBuffer,
    ) -> Result<()> {
        let geometries = blas_geometries(self.geometry.address);
        let info = blas_info(&geometries)
            .mode(vk::BuildAccelerationStructureModeKHR::BUILD)
            .dst_acceleration_structure(self.blas()?)
            .scratch_data(vk::DeviceOrHostAddressKHR {
                device_address: self.scratch.address,
            });
        let ranges = BLAS_PRIMITIVES
            .map(|n| vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(n));
        // SAFETY: `cb` is recording; every address points into a live buffer with the usage
        // the build needs; the scratch is large enough and used by nothing else meanwhile.
        unsafe { fns.cmd_build_acceleration_structures(cb, &[info], &[&ranges]) };
        Ok(())
    }

    /// Creates the compacted structure (`size` bytes, read back from the query) and writes
    /// the instances, which reference it.
    pub fn make_compact(
        &mut self,
        dev: &Device,
        fns: &ash::khr::acceleration_structure::Device,
        size: u64,
    ) -> Result<()> {
        let bottom = vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL;
        let compact = Structure::new(dev, fns, bottom, size)?;
        for (index, transform) in TRANSFORMS.iter().enumerate() {
            let matrix = transform.iter().flatten().map(|&v| (v as f32).to_bits());
            // instanceCustomIndex (24 bits) and mask (8); SBT record offset 0 and no flags;
            // the structure's device address.
            let fields = [
                index as u32 | 0xff << 24,
                0,
                compact.address as u32,
                (compact.address >> 32) as u32,
            ];
            let record = bytes(matrix.chain(fields));
            self.instances.write(index as u64 * INSTANCE_BYTES, &record);
        }
        self.compact = Some(compact);
        Ok(())
    }

    /// vkCmdCopyAccelerationStructureKHR of the built structure into the compact one.
    pub fn record_compaction(
        &self,
        fns: &ash::khr::acceleration_structure::Device,
        cb: vk::CommandBuffer,
    ) -> Result<()> {
        let dst = self.compact.as_ref().ok_or("no compact BLAS yet")?;
        let info = vk::CopyAccelerationStructureInfoKHR::default()
            .src(self.blas()?)
            .dst(dst.handle)
            .mode(vk::CopyAccelerationStructureModeKHR::COMPACT);
        // SAFETY: `cb` is recording; the source was built with ALLOW_COMPACTION and the
        // destination has the compacted size the device reported.
        unsafe { fns.cmd_copy_acceleration_structure(cb, &info) };
        Ok(())
    }

    /// vkCmdBuildAccelerationStructuresKHR of the top-level structure: BUILD, or UPDATE in
    /// place (source and destination the same).
    pub fn record_tlas(
        &self,
        fns: &ash::khr::acceleration_structure::Device,
        cb: vk::CommandBuffer,
        mode: vk::BuildAccelerationStructureModeKHR,
    ) {
        let geometries = tlas_geometries(self.instances.address);
        let mut info = tlas_info(&geometries)
            .mode(mode)
            .dst_acceleration_structure(self.tlas.handle)
            .scratch_data(vk::DeviceOrHostAddressKHR {
                device_address: self.scratch.address,
            });
        if mode == vk::BuildAccelerationStructureModeKHR::UPDATE {
            info = info.src_acceleration_structure(self.tlas.handle);
        }
        let ranges = TLAS_PRIMITIVES
            .map(|n| vk::AccelerationStructureBuildRangeInfoKHR::default().primitive_count(n));
        // SAFETY: as in `record_blas_build`; an update follows a build with ALLOW_UPDATE of
        // the same instance count, and the scratch covers the update scratch size.
        unsafe { fns.cmd_build_acceleration_structures(cb, &[info], &[&ranges]) };
    }

    /// Destroys the structure as built, once compacted (the instances reference the copy).
    pub fn drop_original(&mut self, dev: &Device, fns: &ash::khr::acceleration_structure::Device) {
        if let Some(blas) = self.blas.take() {
            blas.destroy(dev, fns);
        }
    }

    pub fn destroy(mut self, dev: &Device, fns: &ash::khr::acceleration_structure::Device) {
        self.drop_original(dev, fns);
        if let Some(compact) = self.compact.take() {
            compact.destroy(dev, fns);
        }
        self.tlas.destroy(dev, fns);
        self.geometry.buffer.destroy(dev);
        self.instances.buffer.destroy(dev);
        self.scratch.buffer.destroy(dev);
    }
}

/// The bottom-level structure's geometries: the indexed rectangle, then the triangle.
fn blas_geometries(base: vk::DeviceAddress) -> [vk::AccelerationStructureGeometryKHR<'static>; 2] {
    let triangles = |vertices: u64, max_vertex: u32, indices: Option<u64>| {
        let data = vk::AccelerationStructureGeometryTrianglesDataKHR::default()
            .vertex_format(vk::Format::R32G32B32_SFLOAT)
            .vertex_data(vk::DeviceOrHostAddressConstKHR {
                device_address: base + vertices,
            })
            .vertex_stride(12)
            .max_vertex(max_vertex);
        let data = match indices {
            Some(at) => {
                data.index_type(vk::IndexType::UINT32)
                    .index_data(vk::DeviceOrHostAddressConstKHR {
                        device_address: base + at,
                    })
            }
            None => data.index_type(vk::IndexType::NONE_KHR),
        };
        vk::AccelerationStructureGeometryKHR::default()
            .geometry_type(vk::GeometryTypeKHR::TRIANGLES)
            .geometry(vk::AccelerationStructureGeometryDataKHR { triangles: data })
            .flags(vk::GeometryFlagsKHR::OPAQUE)
    };
    [
        triangles(0, RECTANGLE.len() as u32 - 1, Some(INDEX_OFFSET)),
        triangles(TRIANGLE_OFFSET, TRIANGLE.len() as u32 - 1, None),
    ]
}

fn blas_info<'a>(
    geometries: &'a [vk::AccelerationStructureGeometryKHR<'a>],
) -> vk::AccelerationStructureBuildGeometryInfoKHR<'a> {
    vk::AccelerationStructureBuildGeometryInfoKHR::default()
        .ty(vk::AccelerationStructureTypeKHR::BOTTOM_LEVEL)
        .flags(BLAS_FLAGS)
        .geometries(geometries)
}

/// The top-level structure's one geometry: the instances, packed in an array.
fn tlas_geometries(
    instances: vk::DeviceAddress,
) -> [vk::AccelerationStructureGeometryKHR<'static>; 1] {
    let data = vk::AccelerationStructureGeometryInstancesDataKHR::default()
        .array_of_pointers(false)
        .data(vk::DeviceOrHostAddressConstKHR {
            device_address: instances,
        });
    [vk::AccelerationStructureGeometryKHR::default()
        .geometry_type(vk::GeometryTypeKHR::INSTANCES)
        .geometry(vk::AccelerationStructureGeometryDataKHR { instances: data })]
}

fn tlas_info<'a>(
    geometries: &'a [vk::AccelerationStructureGeometryKHR<'a>],
) -> vk::AccelerationStructureBuildGeometryInfoKHR<'a> {
    vk::AccelerationStructureBuildGeometryInfoKHR::default()
        .ty(vk::AccelerationStructureTypeKHR::TOP_LEVEL)
        .flags(TLAS_FLAGS)
        .geometries(geometries)
}

fn sizes(
    fns: &ash::khr::acceleration_structure::Device,
    info: &vk::AccelerationStructureBuildGeometryInfoKHR<'_>,
    primitives: &[u32],
) -> vk::AccelerationStructureBuildSizesInfoKHR<'static> {
    let mut sizes = vk::AccelerationStructureBuildSizesInfoKHR::default();
    // SAFETY: `primitives` has one count per geometry of `info`.
    unsafe {
        fns.get_acceleration_structure_build_sizes(
            vk::AccelerationStructureBuildTypeKHR::DEVICE,
            info,
            primitives,
            &mut sizes,
        )
    };
    sizes
}
