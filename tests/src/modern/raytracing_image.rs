//! The image the `raytracing` scenario must read back, worked out on the host from the
//! scene, and the check of each read-back against it.

use super::structures::{RECTANGLE, RECTANGLE_INDICES, SIZE, TRANSFORMS, TRIANGLE};
use crate::vk::Result;

/// What each pixel must hold, row by row: what `raytrace.rchit` writes for the nearest
/// triangle under the pixel's center, else 0 (`raytrace.rmiss`). Worked out in integers
/// (coordinates doubled, so centers are odd): an error if a center lies on an edge, where the
/// GPU's answer would be a coin toss.
pub fn expected() -> Result<Vec<u32>> {
    let mut triangles: Vec<(u32, u32, [[i64; 2]; 3])> = RECTANGLE_INDICES
        .chunks(3)
        .enumerate()
        .map(|(prim, ix)| (0, prim as u32, [0, 1, 2].map(|k| RECTANGLE[ix[k] as usize])))
        .collect();
    triangles.push((1, 0, TRIANGLE));
    let n = SIZE as usize;
    let mut image = vec![0u32; n * n];
    let mut depth = vec![i64::MAX; n * n];
    for (instance, t) in TRANSFORMS.iter().enumerate() {
        for (geometry, prim, object) in &triangles {
            let world = object.map(|[x, y]| {
                [
                    2 * (t[0][0] * x + t[0][1] * y + t[0][3]),
                    2 * (t[1][0] * x + t[1][1] * y + t[1][3]),
                ]
            });
            let z = t[2][3];
            let value = (instance as u32 + 1) | geometry << 4 | prim << 8;
            for (pixel, (out, near)) in image.iter_mut().zip(depth.iter_mut()).enumerate() {
                let p = [2 * (pixel % n) as i64 + 1, 2 * (pixel / n) as i64 + 1];
                let edges = [0, 1, 2].map(|i| {
                    let (a, b) = (world[i], world[(i + 1) % 3]);
                    (b[0] - a[0]) * (p[1] - a[1]) - (b[1] - a[1]) * (p[0] - a[0])
                });
                let inside = edges.iter().all(|&e| e >= 0) || edges.iter().all(|&e| e <= 0);
                if !inside {
                    continue;
                }
                if edges.contains(&0) {
                    return Err(format!("pixel {pixel}'s center lies on an edge"));
                }
                if z < *near {
                    *near = z;
                    *out = value;
                }
            }
        }
    }
    Ok(image)
}

/// Whether `image` (the read-back pixels, row by row) is the host's image: a few named
/// pixels first (instance 0, instance 1, misses), plausible counts of each, then every
/// pixel. What is wrong goes to stderr, prefixed by the submission's `label`.
pub fn check_image(image: &[u32], label: &str) -> Result<bool> {
    let want = expected()?;
    let got = &image[..want.len()];
    let mut ok = true;
    let at = |x: usize, y: usize| got[y * SIZE as usize + x];
    // (x, y, what the ray there meets, the low 4 bits it leaves: custom index + 1, or 0)
    for (x, y, what, kind) in [
        (10, 10, "instance 0", 1),
        (12, 25, "instance 0", 1),
        (40, 45, "instance 1", 2),
        (55, 40, "instance 1", 2),
        (0, 0, "nothing", 0),
        (63, 63, "nothing", 0),
        (30, 2, "nothing", 0),
    ] {
        let value = at(x, y);
        let right = if kind == 0 {
            value == 0
        } else {
            value & 0xf == kind
        };
        if !right {
            eprintln!("{label}: pixel ({x}, {y}) holds {value:#x}; its ray should meet {what}");
            ok = false;
        }
    }
    let hits = |kind: u32| got.iter().filter(|&&v| v != 0 && v & 0xf == kind).count();
    let (first, second) = (hits(1), hits(2));
    let misses = got.iter().filter(|&&v| v == 0).count();
    if !(200..=400).contains(&first) || !(200..=400).contains(&second) || misses < 3000 {
        eprintln!("{label}: {first} pixels hit instance 0, {second} instance 1, {misses} missed");
        ok = false;
    }
    let wrong: Vec<usize> = (0..want.len()).filter(|&i| got[i] != want[i]).collect();
    if let Some(&i) = wrong.first() {
        let n = SIZE as usize;
        eprintln!(
            "{label}: {} pixels differ from the host's image; the first, ({}, {}), holds {:#x} instead of {:#x}",
            wrong.len(),
            i % n,
            i / n,
            got[i],
            want[i]
        );
        ok = false;
    }
    Ok(ok)
}
