//! `vk_layer_settings.txt`, the file Vulkan Configurator writes (and the Khronos layers
//! read): lines `<layer>.<key> = <value>`, `#` comments. utrace's lines are `utrace.<key>`;
//! other layers' lines are theirs. Found the way the Khronos layers find it: the file or
//! folder `VK_LAYER_SETTINGS_PATH` names, else the per-user `vulkan/settings.d` folder
//! (`$XDG_DATA_HOME`, `~/.local/share`), else the working directory. The first found is
//! read.

use std::path::{Path, PathBuf};

use super::settings::{Entries, Origin, SETTINGS};

pub const FILE_NAME: &str = "vk_layer_settings.txt";
const PREFIX: &str = "utrace.";

/// Where the settings file is, if there is one.
pub fn find(env: &dyn Fn(&str) -> Option<String>, problems: &mut Vec<String>) -> Option<PathBuf> {
    if let Some(named) = env("VK_LAYER_SETTINGS_PATH").filter(|p| !p.is_empty()) {
        let named = PathBuf::from(named);
        let file = if named.is_dir() {
            named.join(FILE_NAME)
        } else {
            named
        };
        if file.is_file() {
            return Some(file);
        }
        problems.push(format!(
            "VK_LAYER_SETTINGS_PATH: no settings file at {}; looking in the usual places",
            file.display()
        ));
    }
    let data_home = env("XDG_DATA_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| env("HOME").map(|h| Path::new(&h).join(".local/share")));
    let per_user = data_home.map(|d| d.join("vulkan/settings.d").join(FILE_NAME));
    per_user
        .into_iter()
        .chain([PathBuf::from(FILE_NAME)])
        .find(|f| f.is_file())
}

/// utrace's lines of the settings `text` read from `path`; a line that is not
/// `key = value`, names a setting utrace does not have, or sets one a second time (the
/// first line counts), is said and skipped.
pub fn parse(text: &str, path: &Path, problems: &mut Vec<String>) -> Entries {
    let mut out = Entries::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let at = || format!("{}:{}", path.display(), i + 1);
        let Some((key, value)) = line.split_once('=') else {
            if line.starts_with(PREFIX) {
                problems.push(format!(
                    "{}: {line:?} is not `utrace.<key> = <value>`; skipped",
                    at()
                ));
            }
            continue;
        };
        let Some(key) = key.trim().strip_prefix(PREFIX) else {
            continue;
        };
        if !SETTINGS.iter().any(|s| s.key == key) {
            let known: Vec<&str> = SETTINGS.iter().map(|s| s.key).collect();
            problems.push(format!(
                "{}: utrace has no setting {key:?} (it has {}); skipped",
                at(),
                known.join(", ")
            ));
            continue;
        }
        if let Some((_, _, Origin::File { line, .. })) = out.iter().find(|(k, _, _)| k == key) {
            problems.push(format!(
                "{}: utrace.{key} was set on line {line} already, which counts; skipped",
                at()
            ));
            continue;
        }
        let value = value.trim();
        // vkconfig writes strings bare; a quoted one is taken without its quotes.
        let value = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(value);
        let origin = Origin::File {
            path: path.display().to_string(),
            line: i + 1,
        };
        out.push((key.to_string(), value.to_string(), origin));
    }
    out
}

/// The settings file's entries, if one is found and readable.
pub fn read(env: &dyn Fn(&str) -> Option<String>, problems: &mut Vec<String>) -> Entries {
    let Some(path) = find(env, problems) else {
        return Entries::new();
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => parse(&text, &path, problems),
        Err(e) => {
            problems.push(format!(
                "{}: {e}; its settings are not used",
                path.display()
            ));
            Entries::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_utraces_lines_are_taken_and_mistakes_are_said() {
        let text = "# written by vkconfig\n\
                    khronos_validation.report_flags = error\n\
                    utrace.trace = true\n\
                    utrace.trace_file = \"/tmp/a b.txt\"\n\
                    utrace.trace_formt = json\n\
                    utrace.frames\n\
                    \n  utrace.log =  info  \n\
                    utrace.trace = false\n";
        let mut problems = Vec::new();
        let got = parse(text, Path::new("/s/vk_layer_settings.txt"), &mut problems);
        let pairs: Vec<(&str, &str)> = got
            .iter()
            .map(|(k, v, _)| (k.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            pairs,
            [
                ("trace", "true"),
                ("trace_file", "/tmp/a b.txt"),
                ("log", "info")
            ]
        );
        assert_eq!(
            got[2].2,
            Origin::File {
                path: "/s/vk_layer_settings.txt".into(),
                line: 8
            }
        );
        assert_eq!(problems.len(), 3, "{problems:?}");
        assert!(problems[0]
            .starts_with("/s/vk_layer_settings.txt:5: utrace has no setting \"trace_formt\""));
        assert!(problems[1].contains(":6:"));
        assert!(
            problems[2].starts_with("/s/vk_layer_settings.txt:9: utrace.trace was set on line 3"),
            "{problems:?}"
        );
    }

    #[test]
    fn the_named_path_then_the_user_folder_then_here() {
        let dir = std::env::temp_dir().join(format!("utrace-settings-{}", std::process::id()));
        let user = dir.join("data/vulkan/settings.d");
        std::fs::create_dir_all(&user).unwrap();
        std::fs::write(user.join(FILE_NAME), "utrace.trace = 1\n").unwrap();
        let named = dir.join("named.txt");
        std::fs::write(&named, "utrace.trace = 0\n").unwrap();
        let data = dir.join("data").display().to_string();
        let named_s = named.display().to_string();
        let mut problems = Vec::new();
        let both = |name: &str| match name {
            "VK_LAYER_SETTINGS_PATH" => Some(named_s.clone()),
            "XDG_DATA_HOME" => Some(data.clone()),
            _ => None,
        };
        assert_eq!(find(&both, &mut problems), Some(named.clone()));
        let user_only = |name: &str| (name == "XDG_DATA_HOME").then(|| data.clone());
        assert_eq!(find(&user_only, &mut problems), Some(user.join(FILE_NAME)));
        let missing =
            |name: &str| (name == "VK_LAYER_SETTINGS_PATH").then(|| "/no/such".to_string());
        let _ = find(&missing, &mut problems);
        assert!(
            problems
                .iter()
                .any(|p| p.contains("no settings file at /no/such")),
            "{problems:?}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
