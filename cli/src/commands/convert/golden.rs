//! Golden files: a trace the layer wrote on Lavapipe (the demo scenario, txt), converted to
//! every target and compared byte for byte with `cli/tests/golden/demo.*`.
//! `UPDATE_GOLDEN=1 cargo test -p utrace-cli` writes them again (review the diff).

use std::path::PathBuf;

use super::{render, Target};

fn golden(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name)
}

#[test]
fn conversions_match_their_golden_files() {
    let trace = crate::trace::read(&golden("demo.txt")).expect("the golden trace");
    assert!(trace.notes.is_empty(), "{:?}", trace.notes);
    for (target, name) in [
        (Target::Chrome, "demo.chrome.json"),
        (Target::Json, "demo.json"),
        (Target::Csv, "demo.csv"),
        (Target::MesaCsv, "demo.mesa.csv"),
        (Target::Perfetto, "demo.pftrace"),
    ] {
        let got = render(&trace, target).expect("renders");
        let path = golden(name);
        if std::env::var_os("UPDATE_GOLDEN").is_some() {
            std::fs::write(&path, &got).expect("writes the golden file");
            continue;
        }
        let want = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            got == want,
            "{name} differs from its golden file (UPDATE_GOLDEN=1 to rewrite)"
        );
    }
}

/// Every converted trace reads back with the same ranges as the original.
#[test]
fn conversions_read_back_the_same_ranges() {
    let spec = crate::analysis::ranges::Spec::built_in();
    let trace = crate::trace::read(&golden("demo.txt")).expect("the golden trace");
    let ranges = |t: &crate::trace::Trace| {
        let mut r: Vec<(String, u64)> = crate::analysis::ranges::pair(t, &spec)
            .ranges
            .iter()
            .map(|r| (r.range.to_string(), r.duration()))
            .collect();
        r.sort();
        r
    };
    let want = ranges(&trace);
    let dir = std::env::temp_dir().join(format!("utrace-convert-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (target, name) in [
        (Target::Json, "t.json"),
        (Target::Csv, "t.csv"),
        (Target::Perfetto, "t.pftrace"),
    ] {
        let path = dir.join(name);
        std::fs::write(&path, render(&trace, target).unwrap()).unwrap();
        let back = crate::trace::read(&path).unwrap();
        assert_eq!(ranges(&back), want, "{name}");
        // Submit times come back too (the golden trace has one per batch).
        let submits = |t: &crate::trace::Trace| -> Vec<Option<u64>> {
            t.batches.iter().map(|b| b.submit_ns).collect()
        };
        assert!(submits(&trace).iter().all(Option::is_some));
        assert_eq!(submits(&back), submits(&trace), "{name}");
    }
    let chrome: serde_json::Value =
        serde_json::from_slice(&render(&trace, Target::Chrome).unwrap()).unwrap();
    let complete = chrome["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .count();
    assert_eq!(complete, want.len(), "one complete event per range");
    let _ = std::fs::remove_dir_all(&dir);
}
