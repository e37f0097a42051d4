//! The parent's side of traceq's throughput: a child per command buffer kind, format and
//! size, the layer's "traceq wrote" line read from each, printed as a table (M events/s of
//! the thread's CPU time, then of its working time), and the memory the layer adds.

use std::process::Command;

use serde_json::{json, Map, Value};

use super::throughput::{self, MEMORY_DRAWS, MILLION, MILLION_KINDS, SIZES};
use super::throughput_kinds::{Kind, KINDS};
use super::FORMATS;

/// Makes a child of the benchmark with these variables set.
pub type Child<'a> = &'a dyn Fn(&[(&str, &str)]) -> Command;
/// Runs a child with these variables and arguments: whether it succeeded, its stderr.
type RunChild<'a> = &'a dyn Fn(&[(&str, &str)], &[String]) -> (bool, String);

/// What one row runs: the kind, the format's name and variables, draws of how many
/// vertices, and the sizes (draws, batches).
struct Row {
    kind: Kind,
    format: (&'static str, &'static [(&'static str, &'static str)]),
    vertices: u32,
    sizes: Vec<(u32, u32)>,
}

impl Row {
    fn key(&self) -> String {
        let triangles = if self.vertices > 0 { "/triangles" } else { "" };
        format!("{}/{}{triangles}", self.kind.name(), self.format.0)
    }
}

fn format(name: &str) -> (&'static str, &'static [(&'static str, &'static str)]) {
    *FORMATS
        .iter()
        .find(|(n, _)| *n == name)
        .expect("a format of FORMATS")
}

/// Every kind in txt and Perfetto with draws of no vertices; one-time and reusable with a
/// visible triangle per draw (the GPU works: one batch); the other formats for the
/// resubmitted kind; with `million`, a million draws for one-time and reusable.
fn rows(million: bool) -> Vec<Row> {
    let mut rows = Vec::new();
    for kind in KINDS {
        for name in ["txt", "perfetto"] {
            let mut sizes = SIZES.to_vec();
            if million && MILLION_KINDS.contains(&kind) {
                sizes.push(MILLION);
            }
            rows.push(Row {
                kind,
                format: format(name),
                vertices: 0,
                sizes,
            });
        }
    }
    for kind in MILLION_KINDS {
        for name in ["txt", "perfetto"] {
            rows.push(Row {
                kind,
                format: format(name),
                vertices: 3,
                sizes: vec![(100_000, 1)],
            });
        }
    }
    for name in ["json", "csv"] {
        rows.push(Row {
            kind: Kind::Resubmit,
            format: format(name),
            vertices: 0,
            sizes: SIZES.to_vec(),
        });
    }
    rows
}

/// Runs every row's children (`child(vars)` makes a child of the benchmark with those
/// variables); prints the table and returns its figures by row key and draws.
pub fn measure(child: Child, million: bool) -> Map<String, Value> {
    println!(
        "\ntraceq throughput, M events/s of its CPU time / of its working time (the layer's UTRACE_LOG=info line)"
    );
    let run = |vars: &[(&str, &str)], args: &[String]| {
        let out = child(vars)
            .args(args)
            .output()
            .expect("the benchmark child runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let mut all = Map::new();
    for row in rows(million) {
        print!("{:<32}", row.key());
        let mut per_size = Map::new();
        for (draws, batches) in &row.sizes {
            let mut vars = row.format.1.to_vec();
            vars.push(("UTRACE_LOG", "info"));
            let args = [
                "--child-throughput".to_string(),
                draws.to_string(),
                "--batches".into(),
                batches.to_string(),
                "--kind".into(),
                row.kind.name().into(),
                "--vertices".into(),
                row.vertices.to_string(),
            ];
            let (ok, stderr) = run(&vars, &args);
            let label = format!("{draws} x{batches}");
            match throughput::parse(&stderr) {
                Some(r) if ok => {
                    print!(" {label:>13}: {:>5.2} / {:<5.2}", r.cpu, r.wall);
                    per_size.insert(draws.to_string(), json!({"cpu": r.cpu, "wall": r.wall}));
                }
                _ => {
                    print!(" {label:>13}: failed");
                    eprintln!("{} {draws}: {stderr}", row.key());
                }
            }
        }
        println!();
        all.insert(row.key(), Value::Object(per_size));
    }
    all.insert("memory_extra_mb".into(), memory(&run));
    all
}

/// The peak memory of a child with the layer (each format) against one timing its draws
/// itself, at [`MEMORY_DRAWS`] draws of no vertices in one resubmitted command buffer.
fn memory(run: RunChild) -> Value {
    let draws = MEMORY_DRAWS.to_string();
    let args = |extra: &[&str]| {
        let mut a = vec!["--child-throughput".to_string(), draws.clone()];
        a.extend(["--batches", "1", "--kind", "resubmit"].map(String::from));
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let (ok, stderr) = run(&[], &args(&["--hand-timed"]));
    let Some(own) = throughput::parse_peak_rss(&stderr).filter(|_| ok) else {
        eprintln!("the hand-timed child failed: {stderr}");
        return Value::Null;
    };
    let mb = |kb: u64| kb as f64 / 1024.0;
    print!(
        "peak memory at {draws} draws: {:.0} MB timed by the program itself; the layer adds",
        mb(own)
    );
    let mut extra = Map::new();
    for (format, vars) in FORMATS {
        let (ok, stderr) = run(vars, &args(&[]));
        match throughput::parse_peak_rss(&stderr).filter(|_| ok) {
            Some(kb) => {
                let more = mb(kb) - mb(own);
                print!(" {more:.0} MB ({format})");
                extra.insert(format.to_string(), json!(more));
            }
            None => eprintln!("{format} {draws}: {stderr}"),
        }
    }
    println!();
    Value::Object(extra)
}
