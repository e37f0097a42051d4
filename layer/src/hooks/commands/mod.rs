//! Hooks of the recording commands (`vkCmd*`), by kind of work. Each writes its tracepoints
//! around the call down through [`crate::trace::DeviceTracer::around`]; without a tracer the
//! call goes straight down.

pub mod dispatch;
pub mod draw;
pub mod labels;
pub mod render_pass;
pub mod sync;
pub mod transfer;

/// Defines a hook that brackets one command with a begin and an end tracepoint:
///
/// ```text
/// bracketed! {
///     /// vkCmdDraw
///     cmd_draw(cb, vertex_count: u32, ...) = core cmd_draw;
///     before |r, t| trace_start_draw(r, t, vertex_count, ...);
///     after |r, t| trace_end_draw(r, t);
/// }
/// ```
///
/// `core NAME` calls down through the 1.0 table, `ext NAME` through the optional table (the
/// hook is only handed out where the next layer has the command).
macro_rules! bracketed {
    (
        $(#[$doc:meta])*
        $name:ident($cb:ident $(, $arg:ident: $ty:ty)* $(,)?) = $table:ident $field:ident;
        before |$r1:ident, $t1:ident| $before:expr;
        after |$r2:ident, $t2:ident| $after:expr;
    ) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// Vulkan's rules for the command.
        pub unsafe extern "system" fn $name($cb: ash::vk::CommandBuffer $(, $arg: $ty)*) {
            let dev = device_or!($cb);
            let Some(next) = bracketed!(@next dev $table $field) else {
                return;
            };
            // SAFETY: forwarded with the application's arguments.
            let call = || unsafe { next($cb $(, $arg)*) };
            match dev.tracer.as_ref() {
                None => call(),
                Some(tracer) => tracer.around(
                    $cb,
                    #[allow(unused_variables)]
                    |$r1, $t1| {
                        $before;
                    },
                    call,
                    #[allow(unused_variables)]
                    |$r2, $t2| {
                        $after;
                    },
                ),
            }
        }
    };
    (@next $dev:ident core $field:ident) => {
        Some($dev.dispatch.fp_v1_0.$field)
    };
    (@next $dev:ident ext $field:ident) => {
        $dev.dispatch.ext.$field
    };
}
pub(crate) use bracketed;
