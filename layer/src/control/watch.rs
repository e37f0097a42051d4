//! A watch asked through the control socket (`utrace top`): the devices' slots given a sink
//! that sums instead of writing (`crate::sink::tally`), the remote gate opened for as long
//! as the client stays, and once a second one line of what the second held sent on the
//! connection. The client leaving (closing, or sending any line such as `stop`), a `stop`
//! from another connection, or the devices going ends it: the gate is closed and the sinks
//! taken out, so the application traces nothing more.
//!
//! The line: `second ms=M frames=F batches=B frame_ns=N,N,... ranges=KIND:NS:COUNT,...`
//! (`ms`, the time the line covers; `frame_ns`, the GPU time of each frame ended in it, at
//! most `tally::MAX_FRAME_TIMES`; `ranges`, per range kind its total time and count), and
//! with pipeline statistics counted in it ` counters=NAME:N,...` (the command buffers'
//! sums, under the names the traces give them).

use std::fmt::Write as _;
use std::io::{ErrorKind, Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::capture;
use crate::sink::tally::{Second, Tally, WatchSink};
use crate::sink::{remote_slot, Counters, Sink};
use crate::trace::remote::REMOTE;

/// How often a line is sent.
const PERIOD: Duration = Duration::from_secs(1);
/// A client that does not read its lines for this long is left (its buffer full): the
/// watch never waits on it longer.
const WRITE_TIME: Duration = Duration::from_secs(2);

/// Why a watch ended, as its last line says it.
enum End {
    /// The client closed or sent a line: it hears nothing more.
    Client,
    Stopped,
    DevicesGone,
    Unwritable,
}

/// Serves a watch on `stream` until it ends; `Err` when it could not start.
pub fn run(stream: &mut UnixStream) -> Result<(), String> {
    capture::exclusive(capture::Exclusive::Watch, || watch(stream))
}

fn watch(stream: &mut UnixStream) -> Result<(), String> {
    // A client gone while a line is written must not kill the application.
    crate::sink::writer::block_sigpipe();
    let tally = Arc::new(Tally::default());
    let make =
        |_device: u32, _header| -> Box<dyn Sink> { Box::new(WatchSink::new(Arc::clone(&tally))) };
    if remote_slot::install(&make).is_empty() {
        remote_slot::finish(Duration::from_secs(1));
        return Err("no device of this process is traced".into());
    }
    REMOTE.request(u32::MAX);
    log::info!("watch started through the control socket");
    let end = serve(stream, &tally);
    REMOTE.stop(u32::MAX);
    remote_slot::finish(Duration::from_secs(1));
    log::info!("watch ended");
    let last = match end {
        End::Client | End::Unwritable => return Ok(()),
        End::Stopped => "done stopped=1",
        End::DevicesGone => "done gone=1",
    };
    let _ = stream.write_all(format!("{last}\n").as_bytes());
    Ok(())
}

/// Sends a line a second until the watch ends.
fn serve(stream: &mut UnixStream, tally: &Tally) -> End {
    if stream.set_write_timeout(Some(WRITE_TIME)).is_err() || send(stream, "started").is_err() {
        return End::Unwritable;
    }
    let mut since = Instant::now();
    let mut input = [0u8; 64];
    loop {
        let left = (since + PERIOD).saturating_duration_since(Instant::now());
        if !left.is_zero() {
            // Waiting for the second's end is waiting for the client: any input (or its
            // closing) ends the watch.
            if stream.set_read_timeout(Some(left)).is_err() {
                return End::Unwritable;
            }
            match stream.read(&mut input) {
                Ok(_) => return End::Client,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(_) => return End::Client,
            }
            continue;
        }
        if capture::stop_asked() {
            return End::Stopped;
        }
        if !remote_slot::any_open() {
            return End::DevicesGone;
        }
        let now = Instant::now();
        let line = line(now.duration_since(since), &tally.take());
        since = now;
        if send(stream, &line).is_err() {
            return End::Unwritable;
        }
    }
}

fn send(stream: &mut UnixStream, line: &str) -> std::io::Result<()> {
    stream.write_all(format!("{line}\n").as_bytes())
}

/// A second's line (see the module's description).
fn line(took: Duration, s: &Second) -> String {
    let mut line = format!(
        "second ms={} frames={} batches={} frame_ns=",
        took.as_millis(),
        s.frames,
        s.batches
    );
    for (i, ns) in s.frame_ns.iter().enumerate() {
        let _ = write!(line, "{}{ns}", if i == 0 { "" } else { "," });
    }
    line.push_str(" ranges=");
    for (i, (kind, ns, count)) in s.ranges.iter().enumerate() {
        let _ = write!(line, "{}{kind}:{ns}:{count}", if i == 0 { "" } else { "," });
    }
    if let Some(counters) = &s.counters {
        line.push_str(" counters=");
        let shown = Counters::NAMES.iter().zip(counters);
        let shown = shown.filter_map(|(name, value)| Some((name, (*value)?)));
        for (i, (name, value)) in shown.enumerate() {
            let _ = write!(line, "{}{name}:{value}", if i == 0 { "" } else { "," });
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_as_a_line() {
        let s = Second {
            frames: 2,
            frame_ns: vec![1500, 1700],
            batches: 4,
            ranges: vec![("cmd_buffer", 3000, 4), ("draw", 900, 6)],
            counters: None,
        };
        assert_eq!(
            line(Duration::from_millis(1002), &s),
            "second ms=1002 frames=2 batches=4 frame_ns=1500,1700 ranges=cmd_buffer:3000:4,draw:900:6"
        );
        let counted = Second {
            counters: Some([
                Some(24),
                Some(8),
                Some(24),
                Some(8),
                Some(8),
                Some(7552),
                Some(960),
                None,
                None,
            ]),
            ..s
        };
        assert_eq!(
            line(Duration::from_millis(1002), &counted),
            "second ms=1002 frames=2 batches=4 frame_ns=1500,1700 ranges=cmd_buffer:3000:4,draw:900:6 counters=input_vertices:24,input_primitives:8,vertex_invocations:24,clipping_invocations:8,clipping_primitives:8,fragment_invocations:7552,compute_invocations:960"
        );
        assert_eq!(
            line(Duration::from_millis(1000), &Second::default()),
            "second ms=1000 frames=0 batches=0 frame_ns= ranges="
        );
    }
}
