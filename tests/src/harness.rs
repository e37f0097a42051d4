//! Running the workload under the freshly built layer, as the integration tests do: a
//! manifest pointing at `target/debug/libVkLayer_utrace.so`, Lavapipe only, a clean
//! environment, a temporary directory per test, and an X server where frames are presented.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};

use crate::report::Report;

mod child_output;
mod xserver;
use child_output::{output_signalled, output_within, read_all, RUN_LIMIT};
pub use child_output::{Kill, StdoutReader};
pub use xserver::XServer;

/// Variables of the loader (and the layer-manifest search path) that a test must not
/// inherit from its environment; every `GPU_TRACE*` and `UTRACE_*` variable is removed by
/// prefix in [`clean_env`], so the layer's own contract needs no list here.
const LOADER_VARS: &[&str] = &[
    "VK_INSTANCE_LAYERS",
    "VK_LOADER_LAYERS_ENABLE",
    "VK_LOADER_LAYERS_DISABLE",
    "VK_LAYER_ENABLES",
    "VK_LAYER_DISABLES",
    "VK_LAYER_SETTINGS_PATH",
    "VK_LAYER_PATH",
    "VK_LOADER_DEBUG",
    "VK_ICD_FILENAMES",
    "VK_ADD_DRIVER_FILES",
    "VK_LOADER_DRIVERS_SELECT",
    "VK_LOADER_DRIVERS_DISABLE",
    "XDG_DATA_HOME",
];

/// Removes from `cmd`'s environment what the test process may have inherited that would
/// change the layer's, the validation layer's or the loader's behaviour: [`LOADER_VARS`],
/// and every variable named `GPU_TRACE*`, `UTRACE_*`, `VK_UTRACE_*` or `VK_KHRONOS_VALIDATION_*` (so that
/// one added later is covered too).
fn clean_env(cmd: &mut Command) {
    default_signals(cmd);
    for var in LOADER_VARS {
        cmd.env_remove(var);
    }
    for (name, _) in std::env::vars_os() {
        let text = name.to_string_lossy();
        if text.starts_with("GPU_TRACE")
            || text.starts_with("UTRACE_")
            || text.starts_with("VK_UTRACE_")
            || text.starts_with("VK_KHRONOS_VALIDATION_")
        {
            cmd.env_remove(&name);
        }
    }
}

/// The stopping signals at their default actions in the child, whatever the tests
/// inherited: a shell without job control starts background commands with SIGINT and
/// SIGQUIT ignored (a stress run or a CI step started in the background), exec keeps that,
/// and an application that ignores SIGINT rightly outlives a Ctrl-C or a kill the test
/// sends.
pub fn default_signals(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: `signal` is async-signal-safe, as pre_exec requires (after fork, before exec).
    unsafe {
        cmd.pre_exec(|| {
            for s in [libc::SIGINT, libc::SIGQUIT, libc::SIGTERM, libc::SIGHUP] {
                libc::signal(s, libc::SIG_DFL);
            }
            Ok(())
        });
    }
}

pub const LAVAPIPE_ICD: &str = "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json";

/// The driver manifest of Lavapipe 25.0 (Vulkan 1.4), which `scripts/setup.sh` extracts from
/// bookworm-backports into the target directory beside the system's 22.3.
pub fn lavapipe_25_icd() -> PathBuf {
    let icd = target_dir().join("mesa-25.0").join("lvp_icd.json");
    assert!(
        icd.exists(),
        "{} is missing: scripts/setup.sh provides Lavapipe 25.0 (run scripts/test.sh)",
        icd.display()
    );
    icd.canonicalize().expect("the manifest's path resolves")
}

/// `VK_LAYER_ENABLES` for synchronization validation, hazards between the command buffers
/// of one submission included (both settings are needed for that).
pub const SYNC_VALIDATION: &str = "VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT:VALIDATION_CHECK_ENABLE_SYNCHRONIZATION_VALIDATION_QUEUE_SUBMIT";

/// The environment that makes VK_LAYER_KHRONOS_validation log its warnings and errors
/// itself (on stdout), for applications that install no debug messenger, such as vkcube.
/// [`crate::checks::validation_log`] picks the messages out of the output.
pub const VALIDATION_LOG: &[(&str, &str)] = &[
    ("VK_KHRONOS_VALIDATION_REPORT_FLAGS", "error,warn"),
    (
        "VK_KHRONOS_VALIDATION_DEBUG_ACTION",
        "VK_DBG_LAYER_ACTION_LOG_MSG",
    ),
];

/// The workspace's target directory: `CARGO_TARGET_DIR` if set (a relative one taken from
/// the workspace root, where cargo is run, not from `tests/`, where the tests run), else
/// `target/` beside this package.
pub fn target_dir() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => workspace.join(dir),
        None => workspace.join("target"),
    }
}

/// The `utrace` command of this build (scripts/test.sh builds it with the layer).
pub fn utrace_exe() -> PathBuf {
    let exe = target_dir().join("debug").join("utrace");
    assert!(
        exe.exists(),
        "{} is missing: build it first (cargo build -p utrace-cli)",
        exe.display()
    );
    exe
}

/// The layer library of this build's profile (debug for the tests, release for the
/// benchmark).
pub fn layer_library() -> PathBuf {
    let (profile, flag) = if cfg!(debug_assertions) {
        ("debug", "")
    } else {
        ("release", " --release")
    };
    let lib = target_dir().join(profile).join("libVkLayer_utrace.so");
    assert!(
        lib.exists(),
        "{} is missing: build the layer first (cargo build{flag} -p utrace-layer)",
        lib.display()
    );
    lib.canonicalize()
        .expect("the layer library's path resolves")
}

/// A directory removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        static COUNT: AtomicU32 = AtomicU32::new(0);
        let n = COUNT.fetch_add(1, Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("utrace-test-{}-{n}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a temporary directory");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The fault-injection test layer (`tests/fault-layer`) of this build's profile, if built.
pub fn fault_layer_library() -> Option<PathBuf> {
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    let lib = target_dir()
        .join(profile)
        .join("libVkLayer_utrace_fault.so");
    lib.canonicalize().ok()
}

/// Writes the layers' manifests (pointing at the built libraries) into `dir/layers`.
pub fn write_manifest(dir: &Path) -> PathBuf {
    let layers = dir.join("layers");
    std::fs::create_dir_all(&layers).expect("the manifest directory");
    if let Some(fault) = fault_layer_library() {
        let manifest = format!(
            r#"{{
    "file_format_version": "1.2.0",
    "layer": {{
        "name": "VK_LAYER_UTRACE_fault",
        "type": "GLOBAL",
        "library_path": "{}",
        "api_version": "1.3.239",
        "implementation_version": "1",
        "description": "utrace's fault injection (tests)"
    }}
}}
"#,
            fault.display()
        );
        std::fs::write(layers.join("VkLayer_utrace_fault.json"), manifest).expect("a manifest");
    }
    let manifest = format!(
        r#"{{
    "file_format_version": "1.2.0",
    "layer": {{
        "name": "VK_LAYER_utrace",
        "type": "GLOBAL",
        "library_path": "{}",
        "api_version": "1.3.239",
        "implementation_version": "1",
        "description": "utrace (test build)",
        "instance_extensions": [{{ "name": "VK_EXT_layer_settings", "spec_version": "2" }}]
    }}
}}
"#,
        layer_library().display()
    );
    std::fs::write(layers.join("VkLayer_utrace.json"), manifest).expect("the manifest");
    layers
}

/// Installs the implicit manifest (`manifest/VkLayer_utrace_implicit.json`, its library path
/// pointed at the built layer) where the loader looks for a user's implicit layers:
/// `dir/data/vulkan/implicit_layer.d`. Set `XDG_DATA_HOME` to the returned path.
pub fn install_implicit_manifest(dir: &Path) -> PathBuf {
    let data = dir.join("data");
    let implicit = data.join("vulkan/implicit_layer.d");
    std::fs::create_dir_all(&implicit).expect("the implicit layer directory");
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../manifest/VkLayer_utrace_implicit.json");
    let text = std::fs::read_to_string(&source).expect("the implicit manifest");
    let text = text.replace(
        "../target/release/libVkLayer_utrace.so",
        &layer_library().display().to_string(),
    );
    std::fs::write(implicit.join("VkLayer_utrace.json"), text).expect("the manifest");
    data
}

/// `program` with a clean environment on Lavapipe (see [`clean_env`]), its runtime folder
/// in `dir`, no layer enabled: for commands that enable the layer themselves (`utrace run`).
pub fn lavapipe_command(dir: &TempDir, program: &Path) -> Command {
    let runtime = dir.path().join("xdg");
    std::fs::create_dir_all(&runtime).expect("a runtime dir");
    let mut cmd = Command::new(program);
    clean_env(&mut cmd);
    cmd.current_dir(dir.path())
        .env("VK_DRIVER_FILES", LAVAPIPE_ICD)
        .env("XDG_RUNTIME_DIR", &runtime)
        .env_remove("VK_INSTANCE_LAYERS");
    cmd
}

/// Runs a real application (`program args`) under the built layer, enabled the way users
/// enable it (`VK_INSTANCE_LAYERS`, `layers` colon-separated), with `envs`; its output.
pub fn run_application(
    dir: &TempDir,
    program: &str,
    args: &[&str],
    layers: &str,
    envs: &[(&str, &str)],
) -> std::process::Output {
    let manifests = write_manifest(dir.path());
    let runtime = dir.path().join("xdg");
    std::fs::create_dir_all(&runtime).expect("a runtime dir");
    let mut cmd = Command::new(program);
    clean_env(&mut cmd);
    cmd.args(args)
        .current_dir(dir.path())
        .env("VK_DRIVER_FILES", LAVAPIPE_ICD)
        .env("VK_ADD_LAYER_PATH", &manifests)
        .env("VK_INSTANCE_LAYERS", layers)
        .env("XDG_RUNTIME_DIR", &runtime);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    output_within(cmd, RUN_LIMIT)
}

/// `UTRACE_TEST_WRAPPER`: a command (words split at spaces) the workload runs under, such
/// as `valgrind --trace-children=yes ...` (`scripts/valgrind-tests.sh`); none by default.
const WRAPPER_VAR: &str = "UTRACE_TEST_WRAPPER";
/// `UTRACE_TEST_TIME_FACTOR`: how many times [`RUN_LIMIT`] a workload may take (a run under
/// valgrind is tens of times slower); 1 by default.
const TIME_FACTOR_VAR: &str = "UTRACE_TEST_TIME_FACTOR";

/// The workload's command, under `UTRACE_TEST_WRAPPER` if set.
fn wrapped(exe: &Path) -> Command {
    let wrapper = std::env::var(WRAPPER_VAR).unwrap_or_default();
    let mut words = wrapper.split_whitespace();
    match words.next() {
        Some(program) => {
            let mut cmd = Command::new(program);
            cmd.args(words).arg(exe);
            cmd
        }
        None => Command::new(exe),
    }
}

/// `UTRACE_TEST_TIME_FACTOR` (1 when unset): how many times slower than natively the
/// workload runs (under valgrind); tests that give a running workload time to do
/// something scale it by this.
pub fn time_factor() -> u32 {
    std::env::var(TIME_FACTOR_VAR)
        .ok()
        .and_then(|f| f.parse::<u32>().ok())
        .unwrap_or(1)
        .max(1)
}

/// How long one workload run may take: [`RUN_LIMIT`] times [`time_factor`].
fn run_limit() -> std::time::Duration {
    RUN_LIMIT * time_factor()
}

/// A finished run of the workload.
#[derive(Debug)]
pub struct Run {
    pub success: bool,
    /// The exit code (None when killed by a signal: a crash).
    pub code: Option<i32>,
    /// The signal that ended the process, if one did.
    pub signal: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// `CLOCK_BOOTTIME` once the process had ended (and its output was read), to within
    /// the harness's 10 ms poll.
    pub ended_boot_ns: u64,
    /// The workload's report, or why it could not be read (see [`Run::report`]).
    report: Result<Report, String>,
}

impl Run {
    /// The workload's report. A test that needs it fails here, naming the file and showing
    /// the workload's stderr, when the workload wrote none or wrote one that does not parse:
    /// checks such as "validation stayed silent" must never run over a default, empty report.
    pub fn report(&self) -> &Report {
        match &self.report {
            Ok(report) => report,
            Err(why) => panic!(
                "{why}\n(workload {}, exit code {:?}, signal {:?}); its stderr:\n{}",
                if self.success { "succeeded" } else { "failed" },
                self.code,
                self.signal,
                self.stderr
            ),
        }
    }
}

/// Reads the report the workload wrote at `path`; an error names the file and says what is
/// wrong with it.
pub fn read_report(path: &Path) -> Result<Report, String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        format!(
            "the workload's report {} cannot be read: {e}",
            path.display()
        )
    })?;
    serde_json::from_str(&text).map_err(|e| {
        format!(
            "the workload's report {} does not parse: {e}",
            path.display()
        )
    })
}

/// A run of the workload to set up: scenario, layers, environment.
pub struct Workload {
    exe: PathBuf,
    args: Vec<String>,
    envs: Vec<(String, std::ffi::OsString)>,
}

/// `workload!("basic")`: the workload binary of this package, for one scenario.
#[macro_export]
macro_rules! workload {
    ($scenario:expr) => {
        $crate::harness::Workload::new(env!("CARGO_BIN_EXE_utrace-workload"), $scenario)
    };
}

impl Workload {
    pub fn new(exe: &str, scenario: &str) -> Workload {
        Workload {
            exe: PathBuf::from(exe),
            args: vec!["--scenario".into(), scenario.into()],
            envs: Vec::new(),
        }
    }

    /// Instance layers enabled by the application, first closest to it.
    pub fn layers(mut self, layers: &[&str]) -> Self {
        self.args.push("--layers".into());
        self.args.push(layers.join(","));
        self
    }

    /// A workload option; an empty `value` makes it a flag.
    pub fn arg(mut self, name: &str, value: &str) -> Self {
        self.args.push(name.into());
        if !value.is_empty() {
            self.args.push(value.into());
        }
        self
    }

    pub fn env(mut self, name: &str, value: impl AsRef<str>) -> Self {
        self.envs.push((name.into(), value.as_ref().into()));
        self
    }

    /// [`Workload::env`] with a value that need not be UTF-8 text.
    pub fn env_os(mut self, name: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        self.envs.push((name.into(), value.as_ref().into()));
        self
    }

    /// Runs on Lavapipe 25.0 (see [`lavapipe_25_icd`]) instead of the system's 22.3.
    pub fn on_lavapipe_25(self) -> Self {
        let icd = lavapipe_25_icd();
        self.env("VK_DRIVER_FILES", icd.to_string_lossy())
    }

    /// Runs in `dir` (its manifest, runtime dir and report live there) and waits.
    pub fn run(self, dir: &TempDir) -> Run {
        self.run_reading_stdout(dir, Box::new(read_all))
    }

    /// [`Workload::run`], with the workload's stdout given to `reader` (which may stop
    /// reading and close it); the run's `stdout` is what `reader` returns.
    pub fn run_reading_stdout(self, dir: &TempDir, reader: StdoutReader) -> Run {
        self.run_with(dir, reader, None)
    }

    /// [`Workload::run`], sending `kill.signal` to the workload `kill.after` it started
    /// (and noting when in `kill.sent_boot_ns`).
    pub fn run_killed(self, dir: &TempDir, kill: &mut Kill) -> Run {
        self.run_with(dir, Box::new(read_all), Some(kill))
    }

    fn run_with(self, dir: &TempDir, reader: StdoutReader, kill: Option<&mut Kill>) -> Run {
        let layers = write_manifest(dir.path());
        let runtime = dir.path().join("xdg");
        std::fs::create_dir_all(&runtime).expect("a runtime dir");
        let report_path = dir.path().join("report.json");
        let _ = std::fs::remove_file(&report_path);
        let mut cmd = wrapped(&self.exe);
        clean_env(&mut cmd);
        cmd.args(&self.args)
            .arg("--report")
            .arg(&report_path)
            .current_dir(dir.path())
            .env("VK_DRIVER_FILES", LAVAPIPE_ICD)
            .env("VK_ADD_LAYER_PATH", &layers)
            .env("XDG_RUNTIME_DIR", &runtime)
            .env_remove("DISPLAY");
        for (k, v) in &self.envs {
            cmd.env(k, v);
        }
        let out = output_signalled(cmd, run_limit(), reader, kill);
        let ended_boot_ns = crate::vk::boottime_ns();
        let report = read_report(&report_path);
        Run {
            success: out.status.success(),
            code: out.status.code(),
            signal: std::os::unix::process::ExitStatusExt::signal(&out.status),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            ended_boot_ns,
            report,
        }
    }
}
