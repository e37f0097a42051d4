//! The harness checks what it claims to check. A workload report that is missing or does
//! not parse fails the test that reads it, naming the file. And validation, when it has
//! something to say, is heard: the positive control of every "validation stays silent"
//! assertion in this suite, on both paths the tests listen on (the workload's own messenger,
//! and the validation layer's log that the vkcube tests read).

use std::panic::{catch_unwind, AssertUnwindSafe};

use utrace_tests::checks::{assert_clean, parse, validation_log};
use utrace_tests::harness::{
    read_report, run_application, TempDir, SYNC_VALIDATION, VALIDATION_LOG,
};
use utrace_tests::validation_control::{EXPECTED_VUID, SCENARIO};
use utrace_tests::workload;

/// What `f` panicked with; fails the test if it did not panic.
fn panic_message(f: impl FnOnce()) -> String {
    let payload = catch_unwind(AssertUnwindSafe(f)).expect_err("the check should have failed");
    if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_string()
    } else {
        String::from("(a panic without a message)")
    }
}

#[test]
fn a_workload_that_wrote_no_report_fails_the_test_that_reads_it_naming_the_file() {
    let dir = TempDir::new("no-report");
    let run = workload!("no-such-scenario")
        .layers(&["VK_LAYER_utrace"])
        .run(&dir);
    assert!(!run.success, "an unknown scenario is refused");
    let message = panic_message(|| {
        let _ = run.report();
    });
    let file = dir.path().join("report.json");
    assert!(
        message.contains(&format!("report {} cannot be read", file.display())),
        "{message}"
    );
    // The workload's own words say why there is no report.
    assert!(message.contains("unknown scenario"), "{message}");
}

#[test]
fn a_report_that_does_not_parse_is_an_error_naming_the_file() {
    let dir = TempDir::new("bad-report");
    let file = dir.path().join("report.json");
    for text in ["", "{\"devices\": [", "{}", "[1, 2]"] {
        std::fs::write(&file, text).unwrap();
        let e = read_report(&file).expect_err(text);
        assert!(
            e.contains(&format!("report {} does not parse", file.display())),
            "{text:?}: {e}"
        );
    }
    // A report the workload wrote reads back.
    std::fs::write(
        &file,
        serde_json::to_string(&utrace_tests::report::Report::default()).unwrap(),
    )
    .unwrap();
    assert!(read_report(&file).is_ok());
}

#[test]
fn a_deliberate_validation_error_beneath_the_layer_is_reported_exactly() {
    // As the suite runs validation: plain, and with synchronization validation.
    for enables in [None, Some(SYNC_VALIDATION)] {
        let dir = TempDir::new("control");
        let mut workload = workload!(SCENARIO)
            .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
            .env("GPU_TRACE", "1");
        if let Some(enables) = enables {
            workload = workload.env("VK_LAYER_ENABLES", enables);
        }
        let run = workload.run(&dir);
        assert!(run.success, "{enables:?}: {}", run.stderr);
        let messages = &run.report().validation_messages;
        assert!(
            !messages.is_empty(),
            "{enables:?}: validation reported nothing about a deliberate error: is it \
             installed, or disabled by the environment? {}",
            run.stderr
        );
        assert_eq!(messages.len(), 1, "{enables:?}: {messages:#?}");
        assert!(
            messages[0].starts_with("ERROR") && messages[0].contains(EXPECTED_VUID),
            "{enables:?}: {}",
            messages[0]
        );
        // The check every other test relies on fails on it.
        let message = panic_message(|| assert_clean(&run));
        assert!(message.contains(EXPECTED_VUID), "{message}");
        // The layer traced the run's one valid submission meanwhile.
        assert_eq!(parse(&run.stdout).batches.len(), 1, "{}", run.stdout);
    }
}

#[test]
fn a_deliberate_validation_error_is_heard_in_the_validation_layers_own_log() {
    // The vkcube tests' way: layers through VK_INSTANCE_LAYERS, no messenger in the
    // application, the validation layer's log read from its output.
    let dir = TempDir::new("control-log");
    let file = dir.path().join("trace.txt");
    let mut envs = vec![("GPU_TRACEFILE", file.to_str().unwrap())];
    envs.extend_from_slice(VALIDATION_LOG);
    let out = run_application(
        &dir,
        env!("CARGO_BIN_EXE_utrace-workload"),
        &["--scenario", SCENARIO],
        "VK_LAYER_utrace:VK_LAYER_KHRONOS_validation",
        &envs,
    );
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    let messages = validation_log(&text);
    assert!(
        !messages.is_empty(),
        "validation logged nothing about a deliberate error: is it installed, or disabled \
         by the environment? Its output: {text}"
    );
    assert_eq!(messages.len(), 1, "{text}");
    assert!(messages[0].contains(EXPECTED_VUID), "{}", messages[0]);
    let trace = parse(&std::fs::read_to_string(&file).expect("the trace file"));
    assert_eq!(trace.batches.len(), 1);
}
