//! Every Vulkan command's names (its canonical name and its KHR/EXT/vendor aliases), from
//! the Vulkan registry at build time: the next layer's functions are looked up by each name
//! the command has, and the hooks are handed out for each of them.

include!(concat!(env!("OUT_DIR"), "/command_aliases.rs"));

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_come_canonical_first() {
        assert_eq!(
            names_of("vkQueueSubmit2"),
            [c"vkQueueSubmit2", c"vkQueueSubmit2KHR"]
        );
        assert_eq!(names_of("vkQueueSubmit2KHR"), [] as [&std::ffi::CStr; 0]);
        assert_eq!(names_of("vkCmdTraceRaysKHR"), [c"vkCmdTraceRaysKHR"]);
    }
}
