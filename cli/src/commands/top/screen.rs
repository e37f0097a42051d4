//! `utrace top`'s two faces: the screen redrawn each second on a terminal, and the one line
//! a second written otherwise (for logs).

use super::summary::{time, History, Second};

/// Range kinds shown on the screen.
const TOP_RANGES: usize = 12;
/// Range kinds named on a log line.
const LOG_RANGES: usize = 3;

/// Frames presented, nothing traced: the application submits command buffers it recorded
/// before the watch began (vkcube does), which only `GPU_TRACE_INSTRUMENT=1` instruments.
const UNINSTRUMENTED: &str = "frames but no batch: command buffers recorded before the watch are not traced; start the application with GPU_TRACE_INSTRUMENT=1";

/// What the screen and the lines name the process by.
pub struct Watched {
    pub pid: u32,
    pub name: String,
}

/// The screen after `seconds` seconds, the latest one `last` (None before the first).
pub fn screen(
    who: &Watched,
    seconds: u64,
    last: Option<&Second>,
    history: &History,
    width: usize,
) -> Vec<String> {
    let mut lines = vec![
        format!(
            "utrace top: pid {} ({}), {seconds} s{:>pad$}",
            who.pid,
            who.name,
            "q or Ctrl-C: quit",
            pad = width.saturating_sub(30 + who.name.len()).max(20)
        ),
        String::new(),
    ];
    let Some(second) = last else {
        lines.push("tracing from the next frame; the first second comes shortly".into());
        return lines;
    };
    let summary = history.summary();
    lines.push(format!("frames per second   {:.1}", second.fps()));
    lines.push(format!("batches per second  {}", second.batches));
    lines.push(format!(
        "GPU time per frame  last {}   p50 {}   p99 {}   ({} frames in {} s)",
        history.last().map_or("-".into(), time),
        if summary.count == 0 {
            "-".into()
        } else {
            time(summary.p50)
        },
        if summary.count == 0 {
            "-".into()
        } else {
            time(summary.p99)
        },
        summary.count,
        history.held()
    ));
    lines.push(format!(
        "                    {}",
        history.sparkline(width.saturating_sub(21).max(10))
    ));
    lines.push(String::new());
    lines.push(format!(
        "{:<28} {:>8} {:>12} {:>12} {:>7}",
        "top ranges, last second", "count", "total", "mean", "GPU%"
    ));
    let ranges = second.top_ranges();
    if ranges.is_empty() {
        lines.push("(nothing traced this second)".into());
    }
    if second.frames > 0 && second.batches == 0 {
        lines.push(String::new());
        lines.push(UNINSTRUMENTED.into());
    }
    for (kind, ns, count) in ranges.into_iter().take(TOP_RANGES) {
        lines.push(format!(
            "{kind:<28} {count:>8} {:>12} {:>12} {:>6.1}%",
            time(*ns),
            time(ns / (*count).max(1)),
            share(*ns, second.ms)
        ));
    }
    if !second.counters.is_empty() {
        lines.push(String::new());
        lines.push(format!(
            "{:<28} {:>14} {:>14}",
            "pipeline statistics, last s", "total", "per frame"
        ));
        for (name, n) in &second.counters {
            let per_frame = if second.frames == 0 {
                "-".to_string()
            } else {
                (n / u64::from(second.frames)).to_string()
            };
            lines.push(format!("{name:<28} {n:>14} {per_frame:>14}"));
        }
    }
    lines
}

/// A second's line for logs.
pub fn log_line(seconds: u64, second: &Second, history: &History) -> String {
    let summary = history.summary();
    let frame = |ns: Option<u64>| ns.map_or("-".into(), time);
    let mut line = format!(
        "{seconds:>4} s  fps {:.1}  GPU/frame last {} p50 {} p99 {}  batches {}  top",
        second.fps(),
        frame(history.last()),
        frame((summary.count > 0).then_some(summary.p50)),
        frame((summary.count > 0).then_some(summary.p99)),
        second.batches
    );
    let ranges = second.top_ranges();
    if ranges.is_empty() {
        line.push_str(" -");
    }
    if second.frames > 0 && second.batches == 0 {
        line.push_str(&format!(" ({UNINSTRUMENTED})"));
    }
    for (i, (kind, ns, count)) in ranges.into_iter().take(LOG_RANGES).enumerate() {
        line.push_str(if i == 0 { " " } else { ", " });
        line.push_str(&format!("{kind} {} ({count})", time(*ns)));
    }
    for (i, (name, n)) in second.counters.iter().enumerate() {
        line.push_str(if i == 0 { "  counters " } else { ", " });
        line.push_str(&format!("{name}={n}"));
    }
    line
}

/// `ns` as a percentage of `ms`.
fn share(ns: u64, ms: u64) -> f64 {
    if ms == 0 {
        0.0
    } else {
        ns as f64 / (ms as f64 * 10_000.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layer's `line`, read, its history, and the screen after `seconds`.
    fn shown(line: &str, seconds: u64) -> (Second, History, String) {
        let second = Second::parse(line).unwrap();
        let mut history = History::default();
        history.push(&second);
        let who = Watched {
            pid: 42,
            name: "app".into(),
        };
        let screen = screen(&who, seconds, Some(&second), &history, 80).join("\n");
        (second, history, screen)
    }

    #[test]
    fn the_screen_and_the_log_line_say_the_same() {
        let (second, history, screen) = shown(
            "second ms=1000 frames=2 batches=4 frame_ns=1500000,2500000 ranges=draw:900000:6,cmd_buffer:4000000:4",
            3,
        );
        assert!(screen.contains("frames per second   2.0"), "{screen}");
        assert!(
            screen.contains("last 2.50 ms   p50 1.50 ms   p99 2.50 ms   (2 frames in 1 s)"),
            "{screen}"
        );
        let cmd = screen.find("cmd_buffer").unwrap();
        assert!(cmd < screen.find("draw").unwrap(), "most time first");
        assert!(screen.contains("4.00 ms      1.00 ms    0.4%"), "{screen}");
        assert_eq!(
            log_line(3, &second, &history),
            "   3 s  fps 2.0  GPU/frame last 2.50 ms p50 1.50 ms p99 2.50 ms  batches 4  top cmd_buffer 4.00 ms (4), draw 900 µs (6)"
        );
    }

    #[test]
    fn pipeline_statistics_are_shown_in_all_and_per_frame() {
        let (second, history, screen) = shown(
            "second ms=1000 frames=2 batches=2 frame_ns=1000,1000 ranges=cmd_buffer:2000:2 counters=input_vertices:48,fragment_invocations:8192",
            1,
        );
        assert!(screen.contains("pipeline statistics, last s"), "{screen}");
        assert!(
            screen.contains(&format!(
                "{:<28} {:>14} {:>14}",
                "fragment_invocations", 8192, 4096
            )),
            "{screen}"
        );
        assert!(log_line(1, &second, &history)
            .ends_with("  counters input_vertices=48, fragment_invocations=8192"));
    }

    #[test]
    fn frames_without_batches_say_why() {
        let second = Second::parse("second ms=1000 frames=60 batches=0 frame_ns= ranges=").unwrap();
        let history = History::default();
        let who = Watched {
            pid: 42,
            name: "vkcube".into(),
        };
        let screen = screen(&who, 1, Some(&second), &history, 80).join("\n");
        assert!(screen.contains("GPU_TRACE_INSTRUMENT=1"), "{screen}");
        assert!(screen.contains("p50 -"), "{screen}");
        assert!(log_line(1, &second, &history).ends_with("GPU_TRACE_INSTRUMENT=1)"));
    }
}
