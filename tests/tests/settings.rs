//! Layer settings (issue 13): each source alone (the environment's `VK_UTRACE_*`, the
//! settings file found by `VK_LAYER_SETTINGS_PATH`, the per-user `vulkan/settings.d` folder
//! or the working directory, the application's `VkLayerSettingsCreateInfoEXT`), their
//! precedence, a malformed value from each named by its source, `UTRACE_LOG=info`'s list,
//! and the manifest's vkconfig schema.

use std::path::Path;

use utrace_tests::checks::{assert_clean, parse};
use utrace_tests::harness::{Run, TempDir, Workload};
use utrace_tests::workload;

const LAYERS: &[&str] = &["VK_LAYER_utrace", "VK_LAYER_KHRONOS_validation"];

fn basic() -> Workload {
    workload!("basic").layers(LAYERS)
}

fn text(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn settings_file(path: &Path, lines: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(
        path,
        format!("# as vkconfig writes it\nkhronos_validation.report_flags = error\n{lines}"),
    )
    .unwrap();
}

#[test]
fn each_source_alone_configures_the_trace() {
    let dir = TempDir::new("settings-sources");
    let p = |name: &str| dir.path().join(name);

    // The environment's new name.
    let run = basic()
        .env("VK_UTRACE_TRACE_FILE", p("env.csv").to_str().unwrap())
        .run(&dir);
    assert_clean(&run);
    assert!(text(&p("env.csv")).starts_with("device,batch,"));

    // The settings file named by VK_LAYER_SETTINGS_PATH (a folder).
    let named = p("named/vk_layer_settings.txt");
    settings_file(
        &named,
        &format!(
            "utrace.trace_file = {}\nutrace.trace_format = json\n",
            p("named.out").display()
        ),
    );
    let run = basic()
        .env("VK_LAYER_SETTINGS_PATH", p("named").to_str().unwrap())
        .run(&dir);
    assert_clean(&run);
    assert!(text(&p("named.out")).starts_with("{\"type\":\"trace\""));
    assert!(text(&p("named.out")).contains("\n{\"type\":\"batch\""));

    // The per-user folder.
    let user = p("data/vulkan/settings.d/vk_layer_settings.txt");
    settings_file(
        &user,
        &format!(
            "utrace.trace = true\nutrace.trace_file = {}\n",
            p("user.txt").display()
        ),
    );
    let run = basic()
        .env("XDG_DATA_HOME", p("data").to_str().unwrap())
        .run(&dir);
    assert_clean(&run);
    assert_eq!(parse(&text(&p("user.txt"))).batches[0].number, 1);

    // The working directory (the workload runs in `dir`).
    settings_file(
        &p("vk_layer_settings.txt"),
        "utrace.trace_file = here.txt\n",
    );
    let run = basic().run(&dir);
    assert_clean(&run);
    assert_eq!(parse(&text(&p("here.txt"))).batches[0].number, 1);
    std::fs::remove_file(p("vk_layer_settings.txt")).unwrap();
}

/// The application's settings. Without validation: Debian 12's validation layer (1.3.239)
/// predates VK_EXT_layer_settings and reports the structure itself as unknown, and its
/// loader refuses the extension's name (the workload then chains the settings without it).
#[test]
fn the_applications_settings_configure_the_trace() {
    let dir = TempDir::new("settings-app");
    let out = dir.path().join("app.txt");
    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace"])
        .arg("--layer-setting", &format!("trace_file={}", out.display()))
        .arg("--layer-setting", "trace=true")
        .env("UTRACE_LOG", "info")
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    assert_eq!(parse(&text(&out)).batches[0].number, 1);
    assert!(
        run.stderr.contains("setting trace = \"true\" (from trace (the application's VkLayerSettingsCreateInfoEXT))"),
        "a BOOL32 setting: {}",
        run.stderr
    );
}

#[test]
fn the_environment_wins_then_the_file_then_the_application() {
    let dir = TempDir::new("settings-precedence");
    let p = |name: &str| dir.path().join(name);
    settings_file(
        &p("s/vk_layer_settings.txt"),
        &format!(
            "utrace.trace_file = {}\nutrace.trace_format = csv\n",
            p("from-file").display()
        ),
    );
    let with = |w: Workload| {
        w.env(
            "VK_LAYER_SETTINGS_PATH",
            p("s/vk_layer_settings.txt").to_str().unwrap(),
        )
        .arg(
            "--layer-setting",
            &format!("trace_file={}", p("from-app").display()),
        )
        .arg("--layer-setting", "trace_format=json")
        .env("UTRACE_LOG", "info")
    };
    // The file over the application.
    let run = with(workload!("basic").layers(&["VK_LAYER_utrace"])).run(&dir);
    assert!(run.success, "{}", run.stderr);
    assert!(
        text(&p("from-file")).starts_with("device,batch,"),
        "csv, from the file"
    );
    assert!(!p("from-app").exists());
    // The environment's new name over both, and over its older alias.
    let run = with(workload!("basic").layers(&["VK_LAYER_utrace"]))
        .env("VK_UTRACE_TRACE_FILE", p("from-env").to_str().unwrap())
        .env("GPU_TRACEFILE", p("from-alias").to_str().unwrap())
        .env("VK_UTRACE_TRACE_FORMAT", "txt")
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    assert_eq!(parse(&text(&p("from-env"))).batches.len(), 4);
    assert!(!p("from-alias").exists());
    assert!(
        run.stderr.contains("setting trace_file = "),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr.contains("(from VK_UTRACE_TRACE_FILE)"),
        "{}",
        run.stderr
    );
}

/// A malformed value from each source: said once, naming the source, and the run goes on.
#[test]
fn a_malformed_value_names_its_source() {
    let dir = TempDir::new("settings-malformed");
    let p = |name: &str| dir.path().join(name);
    let said = |run: &Run, what: &str| {
        assert!(run.success, "{}", run.stderr);
        assert!(run.stderr.contains(what), "{what}: {}", run.stderr);
    };
    let run = basic()
        .env("VK_UTRACE_FRAMES", "soon")
        .env("GPU_TRACE", "1")
        .run(&dir);
    said(&run, "VK_UTRACE_FRAMES=\"soon\" is not FIRST-LAST");

    let file = p("s/vk_layer_settings.txt");
    settings_file(
        &file,
        "utrace.trace = 1\nutrace.frames = 9-2\nutrace.trace_formt = json\n",
    );
    let run = basic()
        .env("VK_LAYER_SETTINGS_PATH", file.to_str().unwrap())
        .run(&dir);
    said(
        &run,
        &format!(
            "utrace.frames ({}:4)=\"9-2\" is not FIRST-LAST",
            file.display()
        ),
    );
    said(
        &run,
        &format!(
            "{}:5: utrace has no setting \"trace_formt\"",
            file.display()
        ),
    );

    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace"])
        .arg("--layer-setting", "trace_format=xml")
        .env("GPU_TRACE", "1")
        .run(&dir);
    said(
        &run,
        "trace_format (the application's VkLayerSettingsCreateInfoEXT)=\"xml\"",
    );
}

/// The manifest carries what Vulkan Configurator needs: VK_EXT_layer_settings, and each
/// setting and preset with the fields vkconfig's layer schema requires.
#[test]
fn the_manifest_declares_settings_in_vkconfigs_schema() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../manifest");
    for name in ["VkLayer_utrace.json", "VkLayer_utrace_implicit.json"] {
        let m: serde_json::Value = serde_json::from_str(&text(&root.join(name))).unwrap();
        let layer = &m["layer"];
        assert!(layer["instance_extensions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["name"] == "VK_EXT_layer_settings" && e["spec_version"].is_string()));
        let settings = layer["features"]["settings"]
            .as_array()
            .expect("features.settings");
        let keys: Vec<&str> = settings
            .iter()
            .map(|s| s["key"].as_str().unwrap())
            .collect();
        // Which keys, in which order: the layer's settings table holds both manifests to it
        // (layer/src/config/settings.rs); here, the fields vkconfig needs.
        assert!(!keys.is_empty(), "{name}: no settings");
        for s in settings {
            for field in ["key", "label", "description", "type", "default", "env"] {
                assert!(!s[field].is_null(), "{name}: {field} of {s}");
            }
            let key = s["key"].as_str().unwrap();
            assert_eq!(s["env"], format!("VK_UTRACE_{}", key.to_uppercase()));
            let ty = s["type"].as_str().unwrap();
            assert!(
                ["BOOL", "STRING", "SAVE_FILE", "ENUM"].contains(&ty),
                "{ty}"
            );
            if ty == "ENUM" {
                let flags = s["flags"].as_array().expect("an ENUM's flags");
                for f in flags {
                    for field in ["key", "label", "description"] {
                        assert!(f[field].is_string(), "{key}: {f}");
                    }
                }
                assert!(
                    flags.iter().any(|f| f["key"] == s["default"]),
                    "{key}'s default is one of its values"
                );
            }
        }
        let presets = layer["features"]["presets"]
            .as_array()
            .expect("features.presets");
        let labels: Vec<&str> = presets
            .iter()
            .map(|p| p["label"].as_str().unwrap())
            .collect();
        assert_eq!(labels, ["Text trace", "Perfetto file", "Frames window"]);
        for preset in presets {
            assert!(preset["description"].is_string());
            for s in preset["settings"].as_array().unwrap() {
                assert!(keys.contains(&s["key"].as_str().unwrap()), "{s}");
                assert!(!s["value"].is_null());
            }
        }
    }
}

#[test]
fn values_that_are_not_utf8_text_are_said_and_the_trace_goes_to_stdout() {
    // Each was ignored without a word; a GPU_TRACEFILE that is not text gave no trace.
    use std::os::unix::ffi::OsStrExt;
    let dir = TempDir::new("settings-not-text");
    let bytes = |b: &[u8]| std::ffi::OsStr::from_bytes(b).to_os_string();
    let path = [dir.path().as_os_str().as_bytes(), b"/tr\xffce.txt"].concat();
    let run = workload!("basic")
        .layers(&["VK_LAYER_utrace"])
        .env_os("GPU_TRACEFILE", bytes(&path))
        .env_os("GPU_TRACE_FRAMES", bytes(b"0-\xfe"))
        .env_os("GPU_TRACEPOINTS", bytes(b"+draw\xff"))
        .run(&dir);
    assert!(run.success, "{}", run.stderr);
    for name in ["GPU_TRACEFILE", "GPU_TRACE_FRAMES", "GPU_TRACEPOINTS"] {
        let said: Vec<&str> = run
            .stderr
            .lines()
            .filter(|l| l.contains(&format!("{name} is not UTF-8 text")))
            .collect();
        assert_eq!(said.len(), 1, "{name} said once:\n{}", run.stderr);
    }
    assert!(
        run.stderr
            .contains("takes paths that are UTF-8 text only; tracing to stdout"),
        "{}",
        run.stderr
    );
    let trace = utrace_tests::checks::parse(&run.stdout);
    assert!(!trace.batches.is_empty(), "the trace, on stdout");
    assert_eq!(
        std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().as_bytes().starts_with(b"tr"))
            .count(),
        0,
        "no file made up from the name"
    );
}
