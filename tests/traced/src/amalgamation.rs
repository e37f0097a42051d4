//! The declarations of Perfetto's amalgamated SDK source, without its definitions.
//!
//! `perfetto_c.cc` (from the `perfetto-sdk-sys` package) is one 12 MB file: every header
//! the SDK uses, then every source file, each announced by a marker comment written by
//! Perfetto's `gen_amalgamated`:
//!
//! ```text
//! // gen_amalgamated begin header: include/perfetto/ext/tracing/ipc/service_ipc_host.h
//! // gen_amalgamated begin source: src/tracing/ipc/service/service_ipc_host_impl.cc
//! ```
//!
//! There are no end markers. A header's own includes are expanded first, each under a
//! marker of its own, and its text follows them; a source's headers come first, and its
//! text follows the last of them. Every Perfetto header is wrapped in an include guard, so
//! a header's text ends where its guard's `#endif` closes. [`declarations`] keeps the
//! preamble (macros and system includes before the first marker) and every header's text,
//! in order, and drops the sources: the result declares everything the SDK declares, and
//! defines only what headers define (inline functions, templates).
//!
//! The tests' tracing service compiles its few lines against that and links the SDK
//! archive that `perfetto-sdk-sys` already built for the layer, instead of compiling the
//! whole amalgamation a second time.

/// One header whose text is being copied: whether its include guard (`#ifndef`) has been
/// seen, and how deep the preprocessor conditionals inside it are nested. (The guard's
/// `#endif` is not always named after it: generated `.pbzero.h` headers end with
/// `#endif  // Include guard.`.)
struct OpenHeader<'a> {
    name: &'a str,
    guarded: bool,
    depth: usize,
}

/// The preamble and every header of `amalgamation`, in order, or what stopped the split
/// (naming the header and its line), so a new SDK layout fails the build with a reason.
pub fn declarations(amalgamation: &str) -> Result<String, String> {
    const HEADER: &str = "// gen_amalgamated begin header: ";
    const SOURCE: &str = "// gen_amalgamated begin source: ";
    let mut out = String::with_capacity(amalgamation.len());
    let mut in_preamble = true;
    let mut headers = 0usize;
    // Headers whose text has not ended yet: a header's nested includes are pushed on top
    // of it, and its own text resumes when they have ended.
    let mut open: Vec<OpenHeader<'_>> = Vec::new();
    for (index, line) in amalgamation.lines().enumerate() {
        let number = index + 1;
        if let Some(name) = line.strip_prefix(HEADER) {
            in_preamble = false;
            headers += 1;
            open.push(OpenHeader {
                name,
                guarded: false,
                depth: 0,
            });
            push_line(&mut out, line);
            continue;
        }
        if let Some(name) = line.strip_prefix(SOURCE) {
            in_preamble = false;
            if let Some(header) = open.last() {
                return Err(format!(
                    "line {number}: source {name} begins inside header {} (its include guard never closed)",
                    header.name
                ));
            }
            continue;
        }
        if in_preamble {
            push_line(&mut out, line);
            continue;
        }
        let Some(header) = open.last_mut() else {
            // A source's own text.
            continue;
        };
        push_line(&mut out, line);
        let directive = line.trim_start();
        let Some(directive) = directive.strip_prefix('#') else {
            continue;
        };
        let directive = directive.trim_start();
        if !header.guarded {
            if directive.starts_with("ifndef") {
                header.guarded = true;
                header.depth = 1;
            } else if directive.starts_with("if") || directive.starts_with("endif") {
                return Err(format!(
                    "line {number}: header {} has a conditional before its include guard",
                    header.name
                ));
            }
        } else if directive.starts_with("if") {
            header.depth += 1;
        } else if directive.starts_with("endif") {
            header.depth -= 1;
            if header.depth == 0 {
                open.pop();
            }
        }
    }
    if let Some(header) = open.last() {
        return Err(format!(
            "header {} never ends (its include guard never closed)",
            header.name
        ));
    }
    if headers == 0 {
        return Err("no `gen_amalgamated begin header` marker: not an amalgamated source".into());
    }
    Ok(out)
}

fn push_line(out: &mut String, line: &str) {
    out.push_str(line);
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::declarations;

    /// A miniature of the amalgamation's layout: a header with a nested include, a source
    /// whose header comes first and whose text follows it without a marker.
    const SMALL: &str = "\
#define PERFETTO_IMPLEMENTATION
// gen_amalgamated begin header: outer.h
// gen_amalgamated begin header: inner.h
#ifndef INNER_H_
#define INNER_H_
#if defined(X)
int inner_x();
#endif
int inner();
#endif  // INNER_H_
#ifndef OUTER_H_
#define OUTER_H_
int outer();
#endif  // OUTER_H_
// gen_amalgamated begin source: a.cc
// gen_amalgamated begin header: a_private.h
#ifndef A_PRIVATE_H_
#define A_PRIVATE_H_
struct Private { int x; };
#endif  // A_PRIVATE_H_
int outer() { return 1; }
#if defined(X)
int inner_x() { return 2; }
#endif
// gen_amalgamated begin source: b.cc
int inner() { return 3; }
";

    #[test]
    fn keeps_the_preamble_and_every_header_and_drops_the_sources() {
        let kept = declarations(SMALL).unwrap();
        assert_eq!(
            kept,
            "\
#define PERFETTO_IMPLEMENTATION
// gen_amalgamated begin header: outer.h
// gen_amalgamated begin header: inner.h
#ifndef INNER_H_
#define INNER_H_
#if defined(X)
int inner_x();
#endif
int inner();
#endif  // INNER_H_
#ifndef OUTER_H_
#define OUTER_H_
int outer();
#endif  // OUTER_H_
// gen_amalgamated begin header: a_private.h
#ifndef A_PRIVATE_H_
#define A_PRIVATE_H_
struct Private { int x; };
#endif  // A_PRIVATE_H_
"
        );
    }

    #[test]
    fn a_header_without_its_closing_guard_is_an_error_naming_it() {
        let broken = SMALL.replace("#endif  // A_PRIVATE_H_\n", "");
        let e = declarations(&broken).unwrap_err();
        assert!(e.contains("a_private.h"), "{e}");
    }

    #[test]
    fn a_conditional_before_the_include_guard_is_an_error_naming_the_header() {
        let broken = SMALL.replace("#ifndef OUTER_H_", "#if 1\n#endif\n#ifndef OUTER_H_");
        let e = declarations(&broken).unwrap_err();
        assert!(e.contains("outer.h"), "{e}");
    }

    #[test]
    fn text_without_markers_is_not_an_amalgamation() {
        assert!(declarations("int main() {}\n").is_err());
    }
}
