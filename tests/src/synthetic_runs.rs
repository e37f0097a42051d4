//! Folders of runs made up with a fixed seed, for the tests of `utrace diff` over runs: the
//! statistics are checked on data whose truth is known and which is the same on every
//! machine, so the tests cannot flake. Each run is a txt trace of `FRAMES` frames of three
//! labelled passes; a run has a factor of its own (the run-to-run variance that dominates
//! on real machines) and each range its own noise.

use std::fmt::Write;
use std::path::Path;

pub const FRAMES: u64 = 20;
/// The passes and their base durations, ns.
pub const PASSES: [(&str, u64); 3] = [
    ("shadow", 400_000),
    ("lighting", 800_000),
    ("post", 200_000),
];

/// SplitMix64: a small generator, the same sequence for a seed everywhere.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A factor in `1 ± spread`.
    pub fn around(&mut self, spread: f64) -> f64 {
        let unit = (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        1.0 + spread * (2.0 * unit - 1.0)
    }
}

/// What a side's runs are like.
pub struct Side<'a> {
    pub runs: u32,
    pub seed: u64,
    /// A pass made slower (or faster) by this factor.
    pub changed: Option<(&'a str, f64)>,
    /// The header's `driver_info`.
    pub driver_info: &'a str,
}

/// Writes `side`'s runs into `dir` (`run-01.txt`, ...).
pub fn write_side(dir: &Path, side: &Side<'_>) {
    std::fs::create_dir_all(dir).unwrap();
    let mut rng = Rng::new(side.seed);
    for run in 1..=side.runs {
        // Run to run, the machine is ±4% faster or slower; range to range, ±8%.
        let run_factor = rng.around(0.04);
        let mut text = String::new();
        for (section, fields) in [
            ("ORIGIN", "utrace=\"0.1.0 (commit 000000000000)\", process=\"synthetic\", pid=1, host=\"lab\"".to_string()),
            ("DEVICE", format!("device_name=\"Synthetic GPU\", vendor_id=0x1, device_id=0x2, driver_name=\"synthetic\", driver_info=\"{}\", driver_version=\"1.0.0\"", side.driver_info)),
            ("SETTINGS", "format=\"txt\", tracepoints=\"default\", counters=\"off\", frames=\"all\", instrument=0".to_string()),
        ] {
            let _ = writeln!(text, "TRACE {section}: device=0, {fields}");
        }
        let mut ns = 1_000_000_000u64;
        for frame in 0..FRAMES {
            let _ = writeln!(
                text,
                "BATCH {}: device=0 queue=0x1 frame={frame} submission={} cmdbufs=1 queries=8 thread=1",
                frame + 1,
                frame + 1
            );
            text.push_str("+----- NS -----+ +-- Δ --+  +----- MSG -----\n");
            let start = ns;
            let mut last = ns;
            let mut line = |text: &mut String, at: u64, what: &str| {
                let _ = writeln!(text, "{at:016} {:>+9}: {what}", at - last);
                last = at;
            };
            line(
                &mut text,
                ns,
                "start_cmd_buffer: cmd=0x1, level=primary, usage=one_time_submit, thread=1",
            );
            for (pass, base) in PASSES {
                let change = side.changed.filter(|c| c.0 == pass).map_or(1.0, |c| c.1);
                let d = (base as f64 * run_factor * rng.around(0.08) * change) as u64;
                line(
                    &mut text,
                    ns + 1_000,
                    &format!("   begin_label: label=\"{pass}\""),
                );
                line(&mut text, ns + 1_000 + d, "   end_label");
                ns += d + 2_000;
            }
            line(&mut text, ns, "end_cmd_buffer: cmd=0x1");
            let _ = writeln!(text, "ELAPSED: {} ns\nEND OF FRAME {frame}", ns - start);
            ns += 1_000_000;
        }
        std::fs::write(dir.join(format!("run-{run:02}.txt")), text).unwrap();
    }
}
