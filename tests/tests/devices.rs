//! Several devices in one process: each traced on its own, to its own file with `%i`.

use utrace_tests::checks::{assert_batches_match, parse};
use utrace_tests::harness::TempDir;
use utrace_tests::workload;

#[test]
fn two_devices_each_traced_on_their_own() {
    let dir = TempDir::new("two-devices");
    let template = dir.path().join("trace-%i.txt");
    let run = workload!("two-devices")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACEFILE", template.to_str().unwrap())
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    assert!(
        run.report.validation_messages.is_empty(),
        "{:#?}",
        run.report.validation_messages
    );
    assert_eq!(run.report.devices.len(), 2);
    for device in &run.report.devices {
        assert!(device.results_ok);
        let path = dir.path().join(format!("trace-{}.txt", device.index));
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let trace = parse(&text);
        assert!(trace.batches.iter().all(|b| b.device == device.index));
        let batches: Vec<_> = trace.batches.iter().collect();
        assert_batches_match(&batches, &device.submissions);
        assert_eq!(trace.ends.len(), 1);
        assert_eq!(trace.ends[0].device, device.index);
    }
    let queues: Vec<String> = (0..2)
        .map(|i| {
            let text = std::fs::read_to_string(dir.path().join(format!("trace-{i}.txt"))).unwrap();
            parse(&text).batches[0].queue.clone()
        })
        .collect();
    assert_ne!(queues[0], queues[1], "each device has its own queue");
}

#[test]
fn two_devices_share_one_file_without_losing_batches() {
    let dir = TempDir::new("two-devices-one-file");
    let file = dir.path().join("trace.txt");
    let run = workload!("two-devices")
        .layers(&["VK_LAYER_utrace"])
        .env("GPU_TRACEFILE", file.to_str().unwrap())
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    let trace = parse(&std::fs::read_to_string(&file).unwrap());
    for device in &run.report.devices {
        let batches = utrace_tests::checks::device_batches(&trace, device.index);
        assert_batches_match(&batches, &device.submissions);
    }
    assert_eq!(trace.ends.len(), 2);
}

#[test]
fn two_instances_each_with_a_device() {
    let dir = TempDir::new("two-instances");
    let template = dir.path().join("trace-%i.txt");
    let run = workload!("two-instances")
        .layers(&["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"])
        .env("GPU_TRACEFILE", template.to_str().unwrap())
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    assert!(
        run.report.validation_messages.is_empty(),
        "{:#?}",
        run.report.validation_messages
    );
    for device in &run.report.devices {
        let text = std::fs::read_to_string(dir.path().join(format!("trace-{}.txt", device.index)))
            .unwrap();
        let trace = parse(&text);
        let batches: Vec<_> = trace.batches.iter().collect();
        assert_batches_match(&batches, &device.submissions);
    }
}
