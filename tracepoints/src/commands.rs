//! The layer's command tables, generated from the Vulkan registry: every command's aliases
//! (`command_aliases.rs`) and the name-to-hook tables of the commands the layer intercepts
//! (`intercepts.rs`), from the hand-kept list `layer/src/hooks/intercepts.txt`. Pure functions of
//! their inputs, so that they can be tested without a build.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

/// A command of the registry: its canonical name and every name that aliases it, canonical
/// first, aliases in the registry's order.
#[derive(Debug, Default)]
pub struct Registry {
    /// Canonical name → its names.
    pub names: BTreeMap<String, Vec<String>>,
    /// Every name → its canonical name.
    pub canonical: HashMap<String, String>,
}

/// Reads the commands and their aliases out of the registry (vk.xml). Vulkan SC's variants
/// of a command share its name and are skipped.
pub fn registry(reg: &vulkan_registry::Registry) -> Registry {
    use vulkan_registry::{CommandContent, CommandsContent, ProtoContent, RegistryContent};
    let mut direct: Vec<(String, Option<String>)> = Vec::new();
    for content in &reg.contents {
        let RegistryContent::Commands(commands) = content else {
            continue;
        };
        for CommandsContent::Command(c) in &commands.contents {
            if c.api
                .as_deref()
                .is_some_and(|api| !api.split(',').any(|a| a == "vulkan"))
            {
                continue;
            }
            let proto_name = c.contents.iter().find_map(|cc| match cc {
                CommandContent::Proto(p) => p.contents.iter().find_map(|pc| match pc {
                    ProtoContent::Name(n) => Some(n.clone()),
                    _ => None,
                }),
                _ => None,
            });
            if let Some(name) = c.name.clone().or(proto_name) {
                direct.push((name, c.alias.clone()));
            }
        }
    }
    let alias_of: HashMap<&str, &str> = direct
        .iter()
        .filter_map(|(n, a)| a.as_deref().map(|a| (n.as_str(), a)))
        .collect();
    let mut out = Registry::default();
    for (name, _) in &direct {
        // Alias chains (an AMD name aliasing a KHR one aliasing core) end at the command.
        let mut root = name.as_str();
        for _ in 0..8 {
            match alias_of.get(root) {
                Some(next) => root = next,
                None => break,
            }
        }
        out.canonical.insert(name.clone(), root.to_string());
        let names = out.names.entry(root.to_string()).or_default();
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    for (root, names) in out.names.iter_mut() {
        // The canonical name first.
        names.sort_by_key(|n| n != root);
    }
    out
}

/// The two generated files (`command_aliases.rs`, `intercepts.rs`) for the list
/// `intercepts_text`, from the bundled registry; every problem of the list as the error.
pub fn generate(intercepts_text: &str) -> Result<(String, String), Vec<String>> {
    let reg = registry(&vulkan_registry::Registry::vk());
    let list = intercepts(intercepts_text, &reg)?;
    Ok((aliases_code(&reg), intercepts_code(&list, &reg)))
}

/// One line of `intercepts.txt`.
#[derive(Debug)]
pub struct Intercept {
    pub group: String,
    pub command: String,
    pub hook: String,
    pub line: usize,
}

const GROUPS: &[&str] = &["instance", "lifetime", "device", "command", "bracketed"];

/// Parses the list, checking every command against the registry; every problem, with its
/// line, as the error.
pub fn intercepts(text: &str, reg: &Registry) -> Result<Vec<Intercept>, Vec<String>> {
    let mut list = Vec::new();
    let mut errors = Vec::new();
    let mut seen = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        let [group, command, hook] = words[..] else {
            errors.push(format!("line {line_no}: expected `group command hook`"));
            continue;
        };
        if !GROUPS.contains(&group) {
            errors.push(format!(
                "line {line_no}: unknown group {group:?} (one of {GROUPS:?})"
            ));
        }
        match reg.canonical.get(command) {
            None => errors.push(format!(
                "line {line_no}: {command} is not a command of the Vulkan registry"
            )),
            Some(root) if root != command => errors.push(format!(
                "line {line_no}: {command} is an alias of {root}: list the command by {root}"
            )),
            Some(_) => {}
        }
        if let Some(first) = seen.insert(command.to_string(), line_no) {
            errors.push(format!(
                "line {line_no}: {command} is listed already (line {first})"
            ));
        }
        list.push(Intercept {
            group: group.into(),
            command: command.into(),
            hook: hook.into(),
            line: line_no,
        });
    }
    if errors.is_empty() {
        Ok(list)
    } else {
        Err(errors)
    }
}

/// `command_aliases.rs`: [`names_of`] for every command, and the whole registry's commands
/// for the tests.
pub fn aliases_code(reg: &Registry) -> String {
    let mut s = String::from(
        "// @generated by tracepoints/src/commands.rs from the Vulkan registry. Do not edit.\n\n\
         /// Every name of the command `canonical` (its canonical name first, then its\n\
         /// aliases), empty for a name that is not a command's canonical name.\n\
         pub fn names_of(canonical: &str) -> &'static [&'static std::ffi::CStr] {\n    \
         match canonical {\n",
    );
    for (root, names) in &reg.names {
        let list: Vec<String> = names.iter().map(|n| format!("c{n:?}")).collect();
        let _ = writeln!(s, "        {root:?} => &[{}],", list.join(", "));
    }
    s.push_str("        _ => &[],\n    }\n}\n\n");
    s.push_str(
        "/// Every command of the registry, as `(name, canonical name)`.\n\
         #[cfg(test)]\npub const COMMANDS: &[(&str, &str)] = &[\n",
    );
    let mut all: Vec<(&String, &String)> = reg.canonical.iter().collect();
    all.sort();
    for (name, root) in all {
        let _ = writeln!(s, "    ({name:?}, {root:?}),");
    }
    s.push_str("];\n");
    s
}

/// `intercepts.rs`: one function per group answering a name (any alias) with its hook, the
/// `bracketed_table!` of the bracketed hooks, and the list of intercepted names.
pub fn intercepts_code(list: &[Intercept], reg: &Registry) -> String {
    let mut s = String::from(
        "// @generated by tracepoints/src/commands.rs from src/hooks/intercepts.txt and the Vulkan\n\
         // registry. Do not edit.\n\n",
    );
    let arms = |group: &str, item: &dyn Fn(&str, &Intercept) -> String| -> String {
        let mut a = String::new();
        for i in list.iter().filter(|i| i.group == group) {
            let names: Vec<String> = reg.names[&i.command]
                .iter()
                .map(|n| format!("b{n:?}"))
                .collect();
            let _ = writeln!(a, "        {} => {},", names.join(" | "), item(group, i));
        }
        a
    };
    let plain = |_: &str, i: &Intercept| format!("hook!({})", i.hook);
    for (group, func, doc) in [
        (
            "instance",
            "instance_hook",
            "Instance-level functions the layer always intercepts.",
        ),
        (
            "lifetime",
            "device_lifetime_hook",
            "Device functions the layer intercepts even when it does not trace.",
        ),
        (
            "device",
            "device_object_hook",
            "Device functions intercepted while tracing is configured (not `vkCmd*`).",
        ),
        (
            "command",
            "command_hook",
            "The recording commands with hooks of their own.",
        ),
    ] {
        let _ = write!(
            s,
            "/// {doc}\npub fn {func}(name: &CStr) -> vk::PFN_vkVoidFunction {{\n    \
             match name.to_bytes() {{\n{}        _ => None,\n    }}\n}}\n\n",
            arms(group, &plain)
        );
    }
    s.push_str("bracketed_table! {\n");
    for i in list.iter().filter(|i| i.group == "bracketed") {
        let names: Vec<String> = reg.names[&i.command]
            .iter()
            .map(|n| format!("b{n:?}"))
            .collect();
        let _ = writeln!(s, "    {} => {},", names.join(" | "), i.hook);
    }
    s.push_str("}\n\n");
    s.push_str(
        "/// Every intercepted name, as `(name, canonical name)`, aliases included.\n\
         #[cfg(test)]\npub const INTERCEPTED: &[(&str, &str)] = &[\n",
    );
    for i in list {
        for n in &reg.names[&i.command] {
            let _ = writeln!(s, "    ({n:?}, {:?}),", i.command);
        }
    }
    s.push_str("];\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Registry {
        let mut r = Registry::default();
        for (n, root) in [
            ("vkCmdDrawIndirectCount", "vkCmdDrawIndirectCount"),
            ("vkCmdDrawIndirectCountKHR", "vkCmdDrawIndirectCount"),
            ("vkCmdDrawIndirectCountAMD", "vkCmdDrawIndirectCount"),
            ("vkCmdDraw", "vkCmdDraw"),
        ] {
            r.canonical.insert(n.into(), root.into());
            r.names.entry(root.into()).or_default().push(n.into());
        }
        r
    }

    #[test]
    fn aliases_and_unknown_names_are_refused() {
        let errors = intercepts(
            "bracketed vkCmdDrawIndirectCountKHR x::y\nbracketed vkCmdDrawz x::z\nnope vkCmdDraw a::b\n",
            &small(),
        )
        .unwrap_err();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(errors[0].contains("alias of vkCmdDrawIndirectCount"));
        assert!(errors[1].contains("not a command"));
        assert!(errors[2].contains("unknown group"));
    }

    /// The bundled registry knows the commands' aliases, including chains (AMD → KHR →
    /// core) and commands newer than the ash headers the layer is built with.
    #[test]
    fn the_registry_gives_aliases() {
        let reg = registry(&vulkan_registry::Registry::vk());
        assert_eq!(
            reg.names["vkCmdDrawIndirectCount"],
            [
                "vkCmdDrawIndirectCount",
                "vkCmdDrawIndirectCountKHR",
                "vkCmdDrawIndirectCountAMD"
            ]
        );
        assert_eq!(reg.canonical["vkQueueSubmit2KHR"], "vkQueueSubmit2");
        assert_eq!(
            reg.names["vkCmdExecuteGeneratedCommandsEXT"],
            ["vkCmdExecuteGeneratedCommandsEXT"]
        );
        // A different command under a similar name is not an alias.
        assert_eq!(reg.names["vkCmdTraceRaysKHR"], ["vkCmdTraceRaysKHR"]);
        assert_eq!(reg.canonical["vkCmdTraceRaysNV"], "vkCmdTraceRaysNV");
        assert!(reg.names.len() > 500, "{}", reg.names.len());
    }

    #[test]
    fn every_alias_gets_the_hook() {
        let reg = small();
        let list = intercepts("bracketed vkCmdDrawIndirectCount d::c\n", &reg).unwrap();
        let code = intercepts_code(&list, &reg);
        assert!(code.contains(
            "b\"vkCmdDrawIndirectCount\" | b\"vkCmdDrawIndirectCountKHR\" | b\"vkCmdDrawIndirectCountAMD\" => d::c,"
        ));
    }
}
