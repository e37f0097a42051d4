//! Where a trace comes from: each device's header (`utrace_format::header`) as read back
//! from any format. Traces of layers before the header have none, and read as before.

/// One device's header: its fields by key, in the order read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origin {
    pub device: u32,
    pub fields: Vec<(String, String)>,
}

impl Origin {
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The header in one line, for the top of a report: the build, the device and driver,
    /// the application and process, the start, and the settings that are not the defaults.
    pub fn summary(&self) -> String {
        let get = |k| self.get(k).filter(|v| !v.is_empty());
        let mut parts = vec![format!("device {}", self.device)];
        if let Some(name) = get("device_name") {
            parts.push(name.to_string());
        }
        let driver: Vec<&str> = ["driver_name", "driver_info"]
            .into_iter()
            .filter_map(get)
            .collect();
        if !driver.is_empty() {
            parts.push(driver.join(" "));
        }
        let app = get("app_name").or_else(|| get("process"));
        if let Some(app) = app {
            let mut who = app.to_string();
            if let Some(pid) = get("pid") {
                who.push_str(&format!(" (pid {pid}"));
                if let Some(host) = get("host") {
                    who.push_str(&format!(" on {host}"));
                }
                who.push(')');
            }
            parts.push(who);
        }
        if let Some(started) = get("started") {
            parts.push(started.to_string());
        }
        for (key, default) in [
            ("tracepoints", "default"),
            ("counters", "off"),
            ("frames", "all"),
        ] {
            if let Some(v) = get(key).filter(|v| *v != default) {
                parts.push(format!("{key} {v}"));
            }
        }
        if let Some(version) = get("utrace") {
            parts.push(format!("utrace {version}"));
        }
        parts.join(" · ")
    }
}

/// Adds `pairs` to device `device`'s header in `origins` (a key read again replaces).
pub fn merge(origins: &mut Vec<Origin>, device: u32, pairs: Vec<(String, String)>) {
    let at = match origins.iter().position(|o| o.device == device) {
        Some(at) => at,
        None => {
            origins.push(Origin {
                device,
                fields: Vec::new(),
            });
            origins.len() - 1
        }
    };
    let origin = &mut origins[at];
    for (key, value) in pairs {
        match origin.fields.iter_mut().find(|(k, _)| *k == key) {
            Some(field) => field.1 = value,
            None => origin.fields.push((key, value)),
        }
    }
}

/// A Perfetto trace's `gpu_info`: each GPU whose `extra_info` names a `device` is that
/// device's header (other producers' GPUs are left alone).
pub fn from_gpu_info(info: &utrace_format::perfetto::GpuInfo, origins: &mut Vec<Origin>) {
    for gpu in &info.gpus {
        let pairs: Vec<(String, String)> = gpu
            .extra_info
            .iter()
            .map(|kv| {
                (
                    kv.key.clone().unwrap_or_default(),
                    kv.value.clone().unwrap_or_default(),
                )
            })
            .collect();
        let device = pairs
            .iter()
            .find(|(k, _)| k == "device")
            .and_then(|(_, v)| v.parse().ok());
        if let Some(device) = device {
            let rest = pairs.into_iter().filter(|(k, _)| k != "device").collect();
            merge(origins, device, rest);
        }
    }
}

/// A txt header line's device and fields: `TRACE DEVICE: device=0, device_name="..."`.
pub fn txt_line(rest: &str) -> Option<(u32, Vec<(String, String)>)> {
    let (_, args) = rest.split_once(": ")?;
    let mut pairs = utrace_format::text_args::parse(args);
    if pairs.first().map(|(k, _)| k.as_str()) != Some("device") {
        return None;
    }
    let device = pairs.remove(0).1.parse().ok()?;
    Some((device, pairs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_lines_merge_per_device_and_read_in_one_line() {
        let mut origins = Vec::new();
        for line in [
            "ORIGIN: device=0, utrace=\"0.1.0 (commit 1a2b)\", process=\"vkcube\", pid=42, host=\"ci\", started=\"2026-11-29T15:30:00.123Z\"",
            "DEVICE: device=0, device_name=\"llvmpipe (LLVM 15.0.6, 256 bits)\", driver_name=\"llvmpipe\", driver_info=\"Mesa 22.3.6\"",
            "SETTINGS: device=0, format=\"txt\", tracepoints=\"-draw\", counters=\"off\", frames=\"all\"",
            "ORIGIN: device=1, utrace=\"0.1.0\"",
        ] {
            let (device, pairs) = txt_line(line).unwrap();
            merge(&mut origins, device, pairs);
        }
        assert_eq!(origins.len(), 2);
        assert_eq!(origins[0].get("pid"), Some("42"));
        assert_eq!(
            origins[0].summary(),
            "device 0 · llvmpipe (LLVM 15.0.6, 256 bits) · llvmpipe Mesa 22.3.6 · vkcube (pid 42 on ci) · 2026-11-29T15:30:00.123Z · tracepoints -draw · utrace 0.1.0 (commit 1a2b)"
        );
        assert_eq!(
            txt_line("ORIGIN: utrace=\"x\""),
            None,
            "no device: not a header"
        );
    }
}
