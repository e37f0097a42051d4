//! Hooks of the recording commands (`vkCmd*`), by kind of work. Each writes its tracepoints
//! around the call down through [`crate::trace::DeviceTracer::around`]; without a tracer the
//! call goes straight down.

pub mod acceleration;
pub mod bind;
pub mod conditional;
pub mod dispatch;
pub mod draw;
pub mod generated;
pub mod labels;
pub mod queries;
pub mod rays;
pub mod render_pass;
pub mod rendering;
pub mod sync;
pub mod transfer;

/// Defines a hook that brackets one command with a begin and an end tracepoint:
///
/// ```text
/// bracketed! {
///     /// vkCmdDraw
///     cmd_draw(cb, vertex_count: u32, ...) = core cmd_draw;
///     switch toggle::DRAW;
///     before |r, t| trace_start_draw(r, t, vertex_count, ...);
///     after |r, t| trace_end_draw(r, t);
/// }
/// ```
///
/// A draw or a dispatch names its range instead (`bracket draw |t| (vertex_count, ...,
/// t.pipelines.graphics)`, the arguments of the range's start, computed with the trace as
/// `t`): its hook gets `before` and `after` from the generated `brackets::draw`, and the
/// short path that records both events at once where the trace has room
/// (`CommandTrace::append_bracket`).
///
/// `core NAME` calls down through the 1.0 table, `ext NAME` through the optional table (the
/// hook is only handed out where the next layer has the command). `switch` names the
/// tracepoints' `GPU_TRACEPOINTS` switch: when it is off the call goes straight down,
/// before anything is looked up or any argument is built (and when it is off as devices are
/// created, `vkGetDeviceProcAddr` does not hand the hook out at all: the module of the
/// hook's name says its switch). Where the switch is the toggle of both tracepoints, `before`
/// and `after` call what does not test it again (the generated `record_*` or `brackets::*`,
/// not `trace_*`): one test per command, and a command whose begin was written always gets
/// its end.
macro_rules! bracketed {
    (
        $(#[$doc:meta])*
        $name:ident($cb:ident $(, $arg:ident: $ty:ty)* $(,)?) = $table:ident $field:ident;
        $(switch $switch:path;)?
        before |$r1:ident, $t1:ident| $before:expr;
        after |$r2:ident, $t2:ident| $after:expr;
    ) => {
        bracketed! {
            @hook
            $(#[$doc])*
            $name($cb $(, $arg: $ty)*) = $table $field;
            $(switch $switch;)?
            before |$r1, $t1| $before;
            after |$r2, $t2| $after;
            short [];
        }
    };
    // A bracket whose range gets pipeline statistics (when its recording counts them): a
    // statistics query inside its two timestamps. In a recording that counts, the hook
    // declines the short path, so that `before` and `after` run (the other tracepoints of
    // such a recording keep it).
    (
        $(#[$doc:meta])*
        $name:ident($cb:ident $(, $arg:ident: $ty:ty)* $(,)?) = $table:ident $field:ident;
        switch $switch:path;
        bracket $range:ident |$t:ident| ($($word:expr),* $(,)?);
        counted $shown:ident;
    ) => {
        bracketed! {
            @hook
            $(#[$doc])*
            $name($cb $(, $arg: $ty)*) = $table $field;
            switch $switch;
            before |r, t| {
                let words = bracketed!(@words t, $range |$t| ($($word),*));
                crate::trace::tracepoints::brackets::$range::start(r, t, words);
                t.begin_range_statistics(r, crate::trace::record::statistics::Shown::$shown);
            };
            after |r, t| {
                t.end_range_statistics(r, crate::trace::record::statistics::Shown::$shown);
                let before = t.events_len();
                crate::trace::tracepoints::brackets::$range::end(r, t);
                t.close_range_statistics(before, crate::trace::record::statistics::Shown::$shown);
            };
            short [counted $shown $range |$t| ($($word),*)];
        }
    };
    (
        $(#[$doc:meta])*
        $name:ident($cb:ident $(, $arg:ident: $ty:ty)* $(,)?) = $table:ident $field:ident;
        switch $switch:path;
        bracket $range:ident |$t:ident| ($($word:expr),* $(,)?);
    ) => {
        bracketed! {
            @hook
            $(#[$doc])*
            $name($cb $(, $arg: $ty)*) = $table $field;
            switch $switch;
            before |r, t| {
                let words = bracketed!(@words t, $range |$t| ($($word),*));
                crate::trace::tracepoints::brackets::$range::start(r, t, words)
            };
            after |r, t| crate::trace::tracepoints::brackets::$range::end(r, t);
            short [$range |$t| ($($word),*)];
        }
    };
    (
        @hook
        $(#[$doc:meta])*
        $name:ident($cb:ident $(, $arg:ident: $ty:ty)*) = $table:ident $field:ident;
        $(switch $switch:path;)?
        before |$r1:ident, $t1:ident| $before:expr;
        after |$r2:ident, $t2:ident| $after:expr;
        short [$($short:tt)*];
    ) => {
        $(#[$doc])*
        ///
        /// # Safety
        /// Vulkan's rules for the command.
        pub unsafe extern "system" fn $name($cb: ash::vk::CommandBuffer $(, $arg: $ty)*) {
            // The idle path: nothing anywhere is recorded with tracepoints, and every device
            // has the same next function (two loads, nothing looked up).
            if crate::trace::record::cmdbufs::nothing_recording() {
                if let Some(f) = $name::COMMON_NEXT.get() {
                    // SAFETY: `f` is the next layer's function for this command on every
                    // device (see `hooks::common_next`), of the hook's own signature.
                    let next = unsafe {
                        std::mem::transmute::<
                            *mut (),
                            unsafe extern "system" fn(ash::vk::CommandBuffer $(, $ty)*),
                        >(f)
                    };
                    // SAFETY: forwarded with the application's arguments.
                    return unsafe { next($cb $(, $arg)*) };
                }
            }
            // SAFETY: the application's call, passed on as it is.
            unsafe { $name::looked_up($cb $(, $arg)*) }
        }

        /// The hook's `GPU_TRACEPOINTS` switch, if it has one (see `hooks::switched`), its
        /// way down while idle, and the rest of it.
        pub mod $name {
            #[allow(unused_imports)]
            use super::*;
            pub const SWITCH: Option<usize> = bracketed!(@switch $($switch)?);
            /// The next layer's function of every device (see `hooks::common_next`).
            pub static COMMON_NEXT: crate::hooks::common_next::CommonNext =
                crate::hooks::common_next::CommonNext::new();
            /// The hook past its idle path: the device looked up, the call traced when a
            /// recording of the device is. Out of line, so that the idle path saves no
            /// registers and ends in a jump.
            ///
            /// # Safety
            /// Vulkan's rules for the command.
            #[inline(never)]
            pub unsafe extern "system" fn looked_up($cb: ash::vk::CommandBuffer $(, $arg: $ty)*) {
                let dev = device_or!($cb);
                let Some(next) = bracketed!(@next dev $table $field) else {
                    return;
                };
                // No recording of this device is instrumented (one load), or this command's
                // switch is off: the call goes straight down.
                let tracer = match dev.tracer.as_ref() {
                    Some(tracer) if tracer.recording_in_progress() => tracer,
                    // SAFETY: forwarded with the application's arguments.
                    _ => return unsafe { next($cb $(, $arg)*) },
                };
                let switched_off =
                    false $(|| !crate::trace::tracepoints::TOGGLES[$switch].is_enabled())?;
                if switched_off {
                    // SAFETY: forwarded with the application's arguments.
                    return unsafe { next($cb $(, $arg)*) };
                }
                /// The traced path, inlined: one frame for the look-up and the tracepoints
                /// (a call between them saved and restored six registers and passed the
                /// arguments twice: 28 of the 225 instructions of a traced draw's hook).
                #[inline(always)]
                #[allow(clippy::too_many_arguments, unused_variables)]
                fn traced(
                    tracer: &crate::trace::DeviceTracer,
                    call: impl FnOnce(),
                    $cb: ash::vk::CommandBuffer
                    $(, $arg: $ty)*
                ) {
                    #[allow(unused_variables)]
                    let before = |$r1: &crate::trace::record::recorder::Recorder<'_>,
                                  $t1: &mut crate::trace::tracepoints::CommandTrace| {
                        $before;
                    };
                    #[allow(unused_variables)]
                    let after = |$r2: &crate::trace::record::recorder::Recorder<'_>,
                                 $t2: &mut crate::trace::tracepoints::CommandTrace| {
                        $after;
                    };
                    let both = bracketed!(@short [$($short)*]);
                    // SAFETY: `$cb` is the command buffer of the application's current call.
                    unsafe { tracer.around_recording($cb, both, before, call, after) }
                }
                // SAFETY: forwarded with the application's arguments.
                traced(tracer, move || unsafe { next($cb $(, $arg)*) }, $cb $(, $arg)*)
            }

            /// Takes a new device's next function into account.
            pub fn adopt(d: &crate::loader::dispatch::DeviceDispatch) {
                COMMON_NEXT.adopt(bracketed!(@fp d, $table $field).map(|f| f as *mut ()));
            }
        }
    };
    (@switch) => {
        None
    };
    (@switch $switch:path) => {
        Some($switch)
    };
    // `around_recording`'s short path: both events at once, for a `bracket` hook; for a
    // counted one, only in a recording that does not count.
    (@short [counted $shown:ident $range:ident |$t:ident| ($($word:expr),*)]) => {
        |t: &mut crate::trace::tracepoints::CommandTrace| {
            if t.counts_range(crate::trace::record::statistics::Shown::$shown) {
                return None;
            }
            let words = bracketed!(@words t, $range |$t| ($($word),*));
            crate::trace::tracepoints::brackets::$range::both(t, words)
        }
    };
    (@short []) => {
        |_: &mut crate::trace::tracepoints::CommandTrace| None
    };
    (@short [$range:ident |$t:ident| ($($word:expr),*)]) => {
        |t: &mut crate::trace::tracepoints::CommandTrace| {
            let words = bracketed!(@words t, $range |$t| ($($word),*));
            crate::trace::tracepoints::brackets::$range::both(t, words)
        }
    };
    // A bracket's start words, computed from the trace before it is borrowed to record.
    (@words $trace:ident, $range:ident |$t:ident| ($($word:expr),*)) => {{
        let $t: &crate::trace::tracepoints::CommandTrace = &*$trace;
        crate::trace::tracepoints::brackets::$range::words($($word),*)
    }};
    (@next $dev:ident $table:ident $field:ident) => {
        bracketed!(@fp (&$dev.dispatch), $table $field)
    };
    (@fp $d:expr, core $field:ident) => {
        Some($d.fp_v1_0.$field)
    };
    (@fp $d:expr, ext $field:ident) => {
        $d.ext.$field
    };
}
pub(crate) use bracketed;
