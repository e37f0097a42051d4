//! Where a device's trace comes from, as each text format's header says it
//! (`utrace_format::header`): what is known at `vkCreateDevice` ([`Origin`]: the device,
//! its driver, the application, the settings, given by the hooks), and what is known when
//! the header is written ([`PendingHeader`]: the build, the process, the host, the time,
//! how the GPU clock was paired with the CPU's).

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use ash::vk;
use utrace_format::header::{Header, Value};

use crate::gpu::interface::GpuClock;

/// What is known of a device's trace at `vkCreateDevice`.
#[derive(Clone, Debug, Default)]
pub struct Origin {
    pub device_name: String,
    pub vendor_id: u32,
    pub device_id: u32,
    pub driver_name: String,
    pub driver_info: String,
    /// `driverVersion`, in the vendor's encoding.
    pub driver_version: u32,
    pub api_version: u32,
    pub timestamp_period: f32,
    /// Each queue family's `timestampValidBits`.
    pub valid_bits: Vec<u32>,
    /// `VkApplicationInfo`'s, empty or 0 where the application gave none.
    pub app_name: String,
    pub app_version: u32,
    pub engine_name: String,
    pub engine_version: u32,
    /// The tracepoints switched from the defaults (`-draw,+barrier`), or `default`.
    pub tracepoints: String,
    /// `off`, `pipeline` or `perf:NAME,...`.
    pub counters: String,
    pub frames: Option<(u32, u32)>,
    pub instrument: bool,
}

/// A version as its vendor encodes it: NVIDIA's 10.8.8.6 bits, everyone else's Vulkan
/// 10.10.12 (Mesa's drivers say the Mesa version this way, Lavapipe 0.0.1).
pub fn driver_version_text(vendor_id: u32, v: u32) -> String {
    const NVIDIA: u32 = 0x10de;
    if vendor_id == NVIDIA {
        return format!(
            "{}.{}.{}.{}",
            v >> 22,
            (v >> 14) & 0xff,
            (v >> 6) & 0xff,
            v & 0x3f
        );
    }
    api_version_text(v)
}

fn api_version_text(v: u32) -> String {
    format!(
        "{}.{}.{}",
        vk::api_version_major(v),
        vk::api_version_minor(v),
        vk::api_version_patch(v)
    )
}

/// `2026-11-29T15:30:00.123Z`: UTC, to the millisecond.
pub fn utc_text(t: SystemTime) -> String {
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    // Days since 1970-01-01 to a civil date (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60,
        since.subsec_millis()
    )
}

/// A line of a `/proc` file, trimmed; empty where it cannot be read.
fn proc_text(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

/// How the events' GPU time is placed on the CPU's clock, if it is.
fn clock_text(clock: Option<&GpuClock>) -> String {
    match clock {
        Some(GpuClock::Calibrated { .. }) => {
            "gpu ns; paired with CLOCK_BOOTTIME by calibrated timestamps".into()
        }
        Some(c @ GpuClock::Measured(_)) => match c.measured_within_ns() {
            Some(within) => {
                format!("gpu ns; paired with CLOCK_BOOTTIME, measured within {within} ns")
            }
            None => "gpu ns; not paired with the CPU's clock (not measured yet)".into(),
        },
        None => "gpu ns; not paired with the CPU's clock".into(),
    }
}

impl Origin {
    /// The header's fields, as they are now, for a trace in `format`.
    pub fn fields(&self, format: &str, clock: Option<&GpuClock>) -> Vec<(&'static str, Value)> {
        let text = |s: &str| Value::Text(s.to_string());
        let bits: Vec<String> = self.valid_bits.iter().map(u32::to_string).collect();
        let frames = match self.frames {
            Some((first, last)) => format!("{first}-{last}"),
            None => "all".into(),
        };
        vec![
            ("utrace", text(crate::VERSION)),
            ("process", text(&proc_text("/proc/self/comm"))),
            ("pid", Value::Number(u64::from(std::process::id()))),
            ("host", text(&proc_text("/proc/sys/kernel/hostname"))),
            ("started", text(&utc_text(SystemTime::now()))),
            ("device_name", text(&self.device_name)),
            ("vendor_id", Value::Hex(u64::from(self.vendor_id))),
            ("device_id", Value::Hex(u64::from(self.device_id))),
            ("driver_name", text(&self.driver_name)),
            ("driver_info", text(&self.driver_info)),
            (
                "driver_version",
                text(&driver_version_text(self.vendor_id, self.driver_version)),
            ),
            ("api_version", text(&api_version_text(self.api_version))),
            (
                "timestamp_period",
                Value::Float(f64::from(self.timestamp_period)),
            ),
            ("valid_bits", text(&bits.join(","))),
            ("clock", text(&clock_text(clock))),
            ("app_name", text(&self.app_name)),
            ("app_version", Value::Number(u64::from(self.app_version))),
            ("engine_name", text(&self.engine_name)),
            (
                "engine_version",
                Value::Number(u64::from(self.engine_version)),
            ),
            ("format", text(format)),
            ("tracepoints", text(&self.tracepoints)),
            ("counters", text(&self.counters)),
            ("frames", text(&frames)),
            ("instrument", Value::Number(u64::from(self.instrument))),
        ]
    }
}

/// A device's header for one output, rendered the first time the device writes there.
#[derive(Default)]
pub struct PendingHeader(Option<(u32, Arc<Origin>, Option<GpuClock>)>);

impl PendingHeader {
    pub fn new(device: u32, origin: Arc<Origin>, clock: Option<GpuClock>) -> PendingHeader {
        PendingHeader(Some((device, origin, clock)))
    }

    /// The header's text the first time (`render` writes it in the output's format), and
    /// `None` after, or when there is none.
    pub fn take(
        &mut self,
        format: &str,
        render: impl FnOnce(&Header<'_>, &mut String),
    ) -> Option<String> {
        let (device, origin, clock) = self.0.take()?;
        let fields = origin.fields(format, clock.as_ref());
        let mut text = String::new();
        render(
            &Header {
                device,
                fields: &fields,
            },
            &mut text,
        );
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_dates_and_driver_versions_read_as_people_write_them() {
        let t = UNIX_EPOCH + std::time::Duration::from_millis(1_795_966_200_123);
        assert_eq!(utc_text(t), "2026-11-29T15:30:00.123Z");
        assert_eq!(utc_text(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = UNIX_EPOCH + std::time::Duration::from_secs(951_782_400);
        assert_eq!(utc_text(leap), "2000-02-29T00:00:00.000Z");
        assert_eq!(
            driver_version_text(0x10de, (535 << 22) | (154 << 14) | (5 << 6)),
            "535.154.5.0"
        );
        assert_eq!(
            driver_version_text(0x1002, vk::make_api_version(0, 25, 0, 7)),
            "25.0.7"
        );
    }

    #[test]
    fn every_header_key_is_given_once() {
        let fields = Origin::default().fields("txt", None);
        let all: Vec<&str> = utrace_format::header::SECTIONS
            .iter()
            .flat_map(|(_, keys)| keys.iter().copied())
            .collect();
        let given: Vec<&str> = fields.iter().map(|(k, _)| *k).collect();
        assert_eq!(given, all, "the header's keys, in its order");
    }
}
