//! The contract's rules, from variables to [`Config`].

use super::*;

fn parse(vars: &[(&str, &str)]) -> Config {
    let vars: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Config::from_lookup(
        |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
        false,
    )
}

#[test]
fn nothing_set_means_off() {
    let c = parse(&[]);
    assert!(!c.enabled);
    assert!(c.problems.is_empty());
}

#[test]
fn gpu_trace_spellings() {
    for on in ["1", "true", "YES", "on"] {
        assert!(parse(&[("GPU_TRACE", on)]).enabled, "{on}");
    }
    for off in ["0", "false", "no", "off", ""] {
        let c = parse(&[("GPU_TRACE", off)]);
        assert!(!c.enabled, "{off}");
        assert!(c.problems.is_empty());
    }
}

#[test]
fn unrecognised_gpu_trace_is_reported_and_on() {
    let c = parse(&[("GPU_TRACE", "banana")]);
    assert!(c.enabled);
    assert_eq!(c.problems.len(), 1);
    assert!(c.problems[0].contains("GPU_TRACE") && c.problems[0].contains("banana"));
}

#[test]
fn tracefile_enables_and_redirects() {
    let c = parse(&[("GPU_TRACEFILE", "/tmp/t-%p.txt")]);
    assert!(c.enabled);
    assert_eq!(c.destination, Destination::File("/tmp/t-%p.txt".into()));
}

#[test]
fn setid_process_ignores_tracefile() {
    let c = Config::from_lookup(
        |n| (n == "GPU_TRACEFILE").then(|| "/tmp/x".to_string()),
        true,
    );
    assert!(c.enabled);
    assert_eq!(c.destination, Destination::Stdout);
    assert_eq!(c.problems.len(), 1);
}

#[test]
fn bad_format_and_log_level_are_reported() {
    let c = parse(&[
        ("GPU_TRACE", "1"),
        ("GPU_TRACE_FORMAT", "xml"),
        ("UTRACE_LOG", "loud"),
    ]);
    assert_eq!(c.formats, vec![Format::Txt]);
    assert_eq!(c.log_level, log::LevelFilter::Warn);
    assert_eq!(
        parse(&[("GPU_TRACE_FORMAT", "JSON")]).formats,
        vec![Format::Json]
    );
    assert_eq!(
        parse(&[("GPU_TRACE_FORMAT", "csv")]).formats,
        vec![Format::Csv]
    );
    // The unknown format and what is written instead, the unknown level.
    assert_eq!(c.problems.len(), 2, "{:?}", c.problems);
    assert!(
        c.problems
            .iter()
            .any(|p| p.contains("\"xml\"") && p.ends_with("and txt is written instead")),
        "{:?}",
        c.problems
    );
}

#[test]
fn perfetto_alone_or_with_one_text_format() {
    let c = parse(&[
        ("GPU_TRACEFILE", "/t/g.pftrace"),
        ("GPU_TRACE_FORMAT", "txt, Perfetto"),
    ]);
    assert_eq!(c.formats, vec![Format::Txt, Format::Perfetto]);
    assert!(c.problems.is_empty());
    let c = parse(&[
        ("GPU_TRACE", "1"),
        ("GPU_TRACE_FORMAT", "json,csv,perfetto,xml"),
    ]);
    assert_eq!(c.formats, vec![Format::Json, Format::Perfetto]);
    assert_eq!(c.problems.len(), 3, "{:?}", c.problems);
    // Formats are named as the user names them.
    assert!(
        c.problems[0].ends_with("; csv is left out"),
        "{}",
        c.problems[0]
    );
    // Without a file the Perfetto trace still goes somewhere, and the user is told.
    let c = parse(&[("GPU_TRACE", "1"), ("GPU_TRACE_FORMAT", "perfetto")]);
    assert_eq!(
        c.destination,
        Destination::File(DEFAULT_PERFETTO_FILE.into())
    );
    let expanded = format!("writing utrace-{}.pftrace", std::process::id());
    assert!(c.problems[0].ends_with(&expanded), "{}", c.problems[0]);
}

#[test]
fn a_file_name_chooses_the_format() {
    let c = parse(&[("GPU_TRACEFILE", "/t/gpu-%p.pftrace")]);
    assert_eq!(c.formats, vec![Format::Perfetto]);
    let c = parse(&[("GPU_TRACEFILE", "x.perfetto-trace")]);
    assert_eq!(c.formats, vec![Format::Perfetto]);
    // So do json and csv names.
    for (name, format) in [
        ("t.json", Format::Json),
        ("t-%p.JSONL", Format::Json),
        ("/t/gpu.csv", Format::Csv),
    ] {
        assert_eq!(
            parse(&[("GPU_TRACEFILE", name)]).formats,
            vec![format],
            "{name}"
        );
    }
    // An explicit format wins; other names stay txt.
    let c = parse(&[("GPU_TRACEFILE", "x.pftrace"), ("GPU_TRACE_FORMAT", "json")]);
    assert_eq!(c.formats, vec![Format::Json]);
    let c = parse(&[("GPU_TRACEFILE", "x.csv"), ("GPU_TRACE_FORMAT", "txt")]);
    assert_eq!(c.formats, vec![Format::Txt]);
    for name in ["x.txt", "x", "csv", "x.csv.gz"] {
        assert_eq!(
            parse(&[("GPU_TRACEFILE", name)]).formats,
            vec![Format::Txt],
            "{name}"
        );
    }
}

#[test]
fn an_unknown_percent_sequence_in_the_file_name_is_said() {
    let c = parse(&[("GPU_TRACEFILE", "/t/x-%q.txt")]);
    assert_eq!(c.destination, Destination::File("/t/x-%q.txt".into()));
    assert_eq!(c.problems.len(), 1, "{:?}", c.problems);
    assert!(
        c.problems[0].contains("%q is not one of %p"),
        "{}",
        c.problems[0]
    );
    assert!(parse(&[("GPU_TRACEFILE", "/t/x-%p-%i-%%.txt")])
        .problems
        .is_empty());
}

#[test]
fn gpu_trace_0_switches_a_trace_file_off_and_says_so() {
    let c = parse(&[("GPU_TRACE", "0"), ("GPU_TRACEFILE", "/t/x.txt")]);
    assert!(!c.enabled);
    assert_eq!(c.problems.len(), 1, "{:?}", c.problems);
    assert!(c.problems[0].contains("GPU_TRACE=\"0\" switches tracing off"));
    // An empty GPU_TRACE is as if unset: the file switches tracing on.
    let c = parse(&[("GPU_TRACE", ""), ("GPU_TRACEFILE", "/t/x.txt")]);
    assert!(c.enabled && c.problems.is_empty());
    // Without a file, 0 is simply off, with nothing to say.
    assert!(parse(&[("GPU_TRACE", "off")]).problems.is_empty());
}

#[test]
fn on_demand_unless_asked_for_a_trace_or_disabled() {
    assert!(parse(&[]).on_demand);
    assert!(!parse(&[("GPU_TRACE", "1")]).on_demand);
    let c = parse(&[("GPU_TRACE", "1"), ("UTRACE_DISABLE", "1")]);
    assert!(!c.on_demand && !c.enabled);
    assert_eq!(
        parse(&[("UTRACE_PERFETTO_BUFFER_KB", "4096")]).perfetto_buffer_kb,
        4096
    );
}

#[test]
fn a_perfetto_buffer_size_out_of_bounds_is_clamped_and_said() {
    for (value, used, says) in [
        (
            "12",
            1024,
            "outside 1024 (1 MiB) to 1048576 (1 GiB); using 1024",
        ),
        ("256", 1024, "using 1024"),
        ("4194304", 1048576, "using 1048576"),
        ("99999999999", 1048576, "using 1048576"),
        ("lots", DEFAULT_PERFETTO_BUFFER_KB, "is not a size in KiB"),
        ("-5", DEFAULT_PERFETTO_BUFFER_KB, "is not a size in KiB"),
    ] {
        let c = parse(&[("UTRACE_PERFETTO_BUFFER_KB", value)]);
        assert_eq!(c.perfetto_buffer_kb, used, "{value}");
        assert_eq!(c.problems.len(), 1, "{value}: {:?}", c.problems);
        assert!(
            c.problems[0].contains(value) && c.problems[0].contains(says),
            "{value}: {}",
            c.problems[0]
        );
    }
}

#[test]
fn frames_and_instrument() {
    let c = parse(&[
        ("GPU_TRACE", "1"),
        ("GPU_TRACE_FRAMES", "3-5"),
        ("GPU_TRACE_INSTRUMENT", "1"),
    ]);
    assert_eq!(c.frames, Some((3, 5)));
    assert!(c.instrument);
    assert!(c.problems.is_empty());
    assert_eq!(parse(&[("GPU_TRACE_FRAMES", " 7 ")]).frames, Some((7, 7)));
    for bad in ["5-3", "x-4", "3-", ""] {
        let c = parse(&[("GPU_TRACE_FRAMES", bad)]);
        assert_eq!(c.frames, None, "{bad}");
        assert_eq!(c.problems.len(), 1, "{bad}");
    }
}

#[test]
fn a_format_without_tracing_on_is_said_and_the_perfetto_stdout_warning_quotes_the_value() {
    let c = parse(&[("GPU_TRACE_FORMAT", "json")]);
    assert!(c.on_demand);
    assert_eq!(c.problems.len(), 1, "{:?}", c.problems);
    assert!(
        c.problems[0].contains("GPU_TRACE_FORMAT=\"json\" is set but tracing is off"),
        "{}",
        c.problems[0]
    );
    let c = parse(&[("GPU_TRACE", "1"), ("GPU_TRACE_FORMAT", "txt,perfetto")]);
    assert_eq!(c.problems.len(), 1, "{:?}", c.problems);
    assert!(
        c.problems[0].starts_with("GPU_TRACE_FORMAT=\"txt,perfetto\": perfetto writes a file"),
        "{}",
        c.problems[0]
    );
}

#[test]
fn counters_pipeline_or_off_and_anything_else_said() {
    assert_eq!(parse(&[]).counters, Counters::Off);
    for off in ["", "0", "off", "none", " OFF "] {
        let c = parse(&[("GPU_TRACE_COUNTERS", off)]);
        assert_eq!(c.counters, Counters::Off, "{off:?}");
        assert!(c.problems.is_empty(), "{off:?}: {:?}", c.problems);
    }
    let c = parse(&[("GPU_TRACE_COUNTERS", " Pipeline")]);
    assert_eq!(c.counters, Counters::Pipeline);
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    let c = parse(&[("GPU_TRACE_COUNTERS", "pipelines")]);
    assert_eq!(c.counters, Counters::Off);
    assert_eq!(
        c.problems,
        ["GPU_TRACE_COUNTERS=\"pipelines\" is not a counter set (pipeline, or perf:NAME,...); no counters"]
    );
    let c = parse(&[("GPU_TRACE_COUNTERS", "perf: Draws , GPU busy,")]);
    assert_eq!(
        c.counters,
        Counters::Perf(vec!["Draws".into(), "GPU busy".into()])
    );
    assert!(c.problems.is_empty(), "{:?}", c.problems);
    let c = parse(&[("GPU_TRACE_COUNTERS", "perf:Draws,draws,Vertices")]);
    assert_eq!(
        c.counters,
        Counters::Perf(vec!["Draws".into(), "Vertices".into()])
    );
    assert_eq!(
        c.problems,
        ["GPU_TRACE_COUNTERS: the counter \"draws\" is named twice; counted once"]
    );
    // More than a range carries: the first nine kept, said.
    let c = parse(&[("GPU_TRACE_COUNTERS", "perf:a,b,c,d,e,f,g,h,i,j,k")]);
    let Counters::Perf(names) = &c.counters else {
        panic!("{:?}", c.counters)
    };
    assert_eq!(names.join(""), "abcdefghi");
    assert_eq!(
        c.problems,
        ["GPU_TRACE_COUNTERS: utrace collects at most 9 hardware counters at once; counting a, b, c, d, e, f, g, h, i"]
    );
    let c = parse(&[("GPU_TRACE_COUNTERS", "PERF:")]);
    assert_eq!(c.counters, Counters::Off);
    assert!(
        c.problems[0].contains("names no counter"),
        "{:?}",
        c.problems
    );
}
