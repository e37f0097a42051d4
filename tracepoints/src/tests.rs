use super::generate;

fn errors(spec: &str) -> Vec<String> {
    generate(spec, "t.toml").expect_err("the spec should be rejected")
}

fn one_error(spec: &str) -> String {
    let e = errors(spec);
    assert_eq!(e.len(), 1, "{e:#?}");
    e.into_iter().next().unwrap()
}

const GOOD: &str = r#"
[[tracepoint]]
name = "start_draw"
doc = "Before a draw."
kind = "begin"
range = "draw"
stage = "Draw"
category = "graphics"
args = [{ name = "vertex_count", type = "u32" }, { name = "label", type = "label" }]

[[tracepoint]]
name = "end_draw"
doc = "After a draw."
kind = "end"
range = "draw"

[[tracepoint]]
name = "barrier"
doc = "A barrier."
kind = "marker"
default = false
stage = "Barrier"
category = "other"
"#;

#[test]
fn good_spec_generates_everything() {
    let code = generate(GOOD, "t.toml").unwrap();
    assert!(code.starts_with("// @generated"));
    assert!(code.contains("pub static TOGGLES: [Toggle; 2]"));
    assert!(code.contains("Toggle::new(\"draw\", true)"));
    assert!(code.contains("Toggle::new(\"barrier\", false)"));
    assert!(code.contains(
        "pub struct StartDraw {\n    pub vertex_count: u32,\n    pub label: LabelRef,\n}"
    ));
    assert!(code.contains(
        "pub fn trace_start_draw(rec: &Recorder<'_>, trace: &mut CommandTrace, vertex_count: u32, label: impl LabelInput)"
    ));
    assert!(code.contains("let label = trace.store_label(label);"));
    assert!(code.contains("pub fn trace_end_draw(rec: &Recorder<'_>, trace: &mut CommandTrace) {"));
    // The end of a range shares its begin's switch and is written at the bottom of the pipe.
    assert!(code.contains(
        "TracepointInfo { name: \"end_draw\", kind: RangeKind::End, range: \"draw\", toggle: 0, end_of_pipe: true"
    ));
    assert!(code.contains(
        "TracepointInfo { name: \"start_draw\", kind: RangeKind::Begin, range: \"draw\", toggle: 0, end_of_pipe: false"
    ));
}

#[test]
fn unknown_type_names_tracepoint_and_line() {
    let spec = GOOD.replace("type = \"u32\"", "type = \"u23\"");
    let e = one_error(&spec);
    assert!(e.starts_with("t.toml:3: tracepoint `start_draw`:"), "{e}");
    assert!(e.contains("unknown type `u23`"), "{e}");
}

#[test]
fn duplicate_name() {
    let spec = format!(
        "{GOOD}\n[[tracepoint]]\nname = \"barrier\"\ndoc = \"x\"\nkind = \"marker\"\nstage = \"B\"\ncategory = \"other\"\n"
    );
    let e = errors(&spec);
    assert!(
        e.iter()
            .any(|e| e.contains("tracepoint `barrier`: declared twice")),
        "{e:#?}"
    );
}

#[test]
fn end_without_begin() {
    let spec =
        "[[tracepoint]]\nname = \"end_blit\"\ndoc = \"x\"\nkind = \"end\"\nrange = \"blit\"\n";
    let e = one_error(spec);
    assert_eq!(e, "t.toml:2: range `blit` has an end but no begin");
}

#[test]
fn begin_without_end() {
    let spec = "[[tracepoint]]\nname = \"start_blit\"\ndoc = \"x\"\nkind = \"begin\"\nrange = \"blit\"\nstage = \"Blit\"\ncategory = \"transfer\"\n";
    assert_eq!(
        one_error(spec),
        "t.toml:2: range `blit` has a begin but no end"
    );
}

#[test]
fn unknown_field_is_a_toml_error_with_position() {
    let spec = GOOD.replace("kind = \"end\"", "kind = \"end\"\ncolour = \"red\"");
    let e = one_error(&spec);
    assert!(e.contains("unknown field `colour`"), "{e}");
    assert!(e.contains("line"), "{e}");
}

#[test]
fn bad_kind_category_and_argument_names() {
    let spec = GOOD
        .replace("kind = \"marker\"", "kind = \"point\"")
        .replace("category = \"graphics\"", "category = \"shading\"")
        .replace("name = \"vertex_count\"", "name = \"type\"");
    let e = errors(&spec);
    assert!(
        e.iter().any(|e| e.contains("`barrier`: kind `point`")),
        "{e:#?}"
    );
    assert!(e.iter().any(|e| e.contains("category `shading`")), "{e:#?}");
    assert!(
        e.iter()
            .any(|e| e.contains("argument `type` is not a usable name")),
        "{e:#?}"
    );
}

#[test]
fn missing_doc_stage_and_misplaced_default() {
    let spec = GOOD
        .replace("doc = \"Before a draw.\"\n", "")
        .replace("stage = \"Draw\"\n", "")
        .replace(
            "range = \"draw\"\n\n[[",
            "range = \"draw\"\ndefault = false\n\n[[",
        );
    let e = errors(&spec);
    assert!(
        e.iter()
            .any(|e| e.contains("`start_draw`: `doc` is missing")),
        "{e:#?}"
    );
    assert!(
        e.iter()
            .any(|e| e.contains("`start_draw`: a begin or marker needs `stage`")),
        "{e:#?}"
    );
    assert!(
        e.iter()
            .any(|e| e.contains("`end_draw`: `default` belongs on the range's begin")),
        "{e:#?}"
    );
}

#[test]
fn the_real_spec_is_valid() {
    let text = std::fs::read_to_string(super::SPEC_PATH).unwrap();
    if let Err(e) = generate(&text, "tracepoints.toml") {
        panic!("{}", e.join("\n"));
    }
}

/// The generated code for `golden/small.toml` is exactly `golden/small.rs`. A change to
/// the generator shows up as a diff of that file, reviewed with the change: regenerate it
/// with `UPDATE_GOLDEN=1 cargo test -p utrace-tracepoints`.
#[test]
fn generated_code_matches_the_golden_file() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("golden");
    let spec = std::fs::read_to_string(dir.join("small.toml")).unwrap();
    let code = generate(&spec, "small.toml").unwrap_or_else(|e| panic!("{e:#?}"));
    let golden_path = dir.join("small.rs");
    let update = std::env::var("UPDATE_GOLDEN")
        .is_ok_and(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "true" | "yes" | "on"));
    if update {
        std::fs::write(&golden_path, &code).unwrap();
        eprintln!("wrote {}", golden_path.display());
    }
    let golden = std::fs::read_to_string(&golden_path).unwrap_or_else(|e| {
        panic!(
            "{}: {e}; create it with UPDATE_GOLDEN=1",
            golden_path.display()
        )
    });
    if let Some(difference) = first_difference(&golden, &code) {
        panic!(
            "the generated code differs from {}:\n{difference}\nIf the change is intended, \
             regenerate it with `UPDATE_GOLDEN=1 cargo test -p utrace-tracepoints` and review \
             the diff.",
            golden_path.display()
        );
    }
}

/// Where `expected` and `actual` first differ, line by line, or None if they are equal.
fn first_difference(expected: &str, actual: &str) -> Option<String> {
    if expected == actual {
        return None;
    }
    let (mut e, mut a) = (expected.lines(), actual.lines());
    let mut number = 1;
    loop {
        match (e.next(), a.next()) {
            (Some(x), Some(y)) if x == y => number += 1,
            (None, None) => {
                return Some("the files differ only in line endings or a final newline".to_string())
            }
            (x, y) => {
                return Some(format!(
                    "line {number}:\n  golden:    {}\n  generated: {}",
                    x.unwrap_or("(end of file)"),
                    y.unwrap_or("(end of file)")
                ))
            }
        }
    }
}

#[test]
fn first_difference_names_the_line() {
    assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
    let d = first_difference("a\nb\nc\n", "a\nB\nc\n").unwrap();
    assert!(d.starts_with("line 2:") && d.contains("golden:    b") && d.contains("generated: B"));
    let d = first_difference("a\n", "a\nb\n").unwrap();
    assert!(d.contains("(end of file)"), "{d}");
    // Only a final newline or line endings apart: still a difference, and said so.
    for (golden, generated) in [("a", "a\n"), ("a\r\nb\r\n", "a\nb\n")] {
        let d = first_difference(golden, generated).unwrap();
        assert!(d.contains("line endings or a final newline"), "{d}");
    }
}
