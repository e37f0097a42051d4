//! What the layer adds after the application's batches of a traced submission (its copy
//! command buffer, the signal of its timeline semaphore). A signal alone is appended to the
//! application's last batch where that is allowed; anything else goes in a batch of its
//! own.
//!
//! Appended, because each batch costs the driver: on Lavapipe an empty batch that only
//! signals costs about as much as the application's small submission itself, the same
//! signal in the application's batch about half of that. The application cannot observe
//! it: the batch's semaphores and fence signal as before, the layer's semaphore with them.
//! The copy command buffer is not appended: the validation layer (1.3.239) then reports the
//! application's next run of a reusable command buffer as writing queries that were not
//! reset, though the copy in the batch before reset them.

use ash::vk;

/// Signal semaphores of the application's last batch up to which the layer's is appended
/// on the stack; a batch with more is left alone.
const INLINE: usize = 16;

/// The layer's part after the application's batches.
#[derive(Clone, Copy, Debug)]
pub struct Tail {
    /// The command buffer that copies the batch's timestamps (absent when they are read
    /// from the queries).
    pub copy: Option<vk::CommandBuffer>,
    /// The timeline semaphore and value that say the batch completed (absent in fence
    /// mode).
    pub signal: Option<(vk::Semaphore, u64)>,
}

/// Room for the application's last `VkSubmitInfo` with the layer's signal appended.
pub struct Appended {
    semaphores: [vk::Semaphore; INLINE],
    values: [u64; INLINE],
    timeline: vk::TimelineSemaphoreSubmitInfo<'static>,
}

impl Appended {
    pub fn new() -> Appended {
        Appended {
            semaphores: [vk::Semaphore::null(); INLINE],
            values: [0; INLINE],
            timeline: vk::TimelineSemaphoreSubmitInfo::default(),
        }
    }

    /// `last` also signalling `semaphore` to `value`, or `None` where that needs a batch of
    /// its own: a batch with an extension chain (a `VkTimelineSemaphoreSubmitInfo` or a
    /// device group's info count the semaphores, and the application's chain cannot be
    /// edited), or one that signals more than [`INLINE`] - 1 semaphores.
    pub fn with_signal<'a>(
        &'a mut self,
        last: &vk::SubmitInfo<'a>,
        (semaphore, value): (vk::Semaphore, u64),
    ) -> Option<vk::SubmitInfo<'a>> {
        if !last.p_next.is_null() {
            return None;
        }
        // SAFETY: the application's batch signals `signal_semaphore_count` semaphores.
        let app =
            unsafe { crate::ffi::slice(last.p_signal_semaphores, last.signal_semaphore_count) };
        let n = app.len();
        if n + 1 > INLINE {
            return None;
        }
        self.semaphores[..n].copy_from_slice(app);
        self.semaphores[n] = semaphore;
        // The application's semaphores are binary (a timeline one would need a chain): their
        // values are ignored.
        self.values[..n].fill(0);
        self.values[n] = value;
        self.timeline.signal_semaphore_value_count = n as u32 + 1;
        self.timeline.p_signal_semaphore_values = self.values.as_ptr();
        let mut info = *last;
        info.signal_semaphore_count = n as u32 + 1;
        info.p_signal_semaphores = self.semaphores.as_ptr();
        info.p_next = (&self.timeline as *const vk::TimelineSemaphoreSubmitInfo<'_>).cast();
        Some(info)
    }
}

/// Room for the application's last `VkSubmitInfo2` with the layer's signal appended.
pub struct Appended2<'a> {
    signals: [vk::SemaphoreSubmitInfo<'a>; INLINE],
}

impl<'a> Appended2<'a> {
    pub fn new() -> Appended2<'a> {
        Appended2 {
            signals: [vk::SemaphoreSubmitInfo::default(); INLINE],
        }
    }

    /// `last` also signalling `semaphore` to `value`, or `None` where it signals more than
    /// [`INLINE`] - 1 semaphores. (`VkSubmitInfo2` carries semaphore values and device
    /// indices in its list, so its chain never counts them.)
    pub fn with_signal(
        &'a mut self,
        last: &vk::SubmitInfo2<'a>,
        (semaphore, value): (vk::Semaphore, u64),
    ) -> Option<vk::SubmitInfo2<'a>> {
        // SAFETY: the application's batch signals `signal_semaphore_info_count` infos.
        let app = unsafe {
            crate::ffi::slice(
                last.p_signal_semaphore_infos,
                last.signal_semaphore_info_count,
            )
        };
        let n = app.len();
        if n + 1 > INLINE {
            return None;
        }
        self.signals[..n].copy_from_slice(app);
        self.signals[n] = signal_info(semaphore, value);
        let mut info = *last;
        info.signal_semaphore_info_count = n as u32 + 1;
        info.p_signal_semaphore_infos = self.signals.as_ptr();
        Some(info)
    }
}

/// The layer's timeline signal, after every command before it.
pub fn signal_info(semaphore: vk::Semaphore, value: u64) -> vk::SemaphoreSubmitInfo<'static> {
    vk::SemaphoreSubmitInfo::default()
        .semaphore(semaphore)
        .value(value)
        .stage_mask(vk::PipelineStageFlags2::ALL_COMMANDS)
}

impl Tail {
    /// The signal, when it is all the tail holds (it can then go in the application's
    /// batch).
    pub fn signal_only(&self) -> Option<(vk::Semaphore, u64)> {
        self.signal.filter(|_| self.copy.is_none())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ash::vk::Handle;

    fn semaphores(range: std::ops::Range<u64>) -> Vec<vk::Semaphore> {
        range.map(vk::Semaphore::from_raw).collect()
    }

    #[test]
    fn the_signal_goes_after_the_applications_own_with_its_value_in_a_chain() {
        let app = semaphores(1..3);
        let cbs = [vk::CommandBuffer::from_raw(9)];
        let last = vk::SubmitInfo::default()
            .command_buffers(&cbs)
            .signal_semaphores(&app);
        let mut room = Appended::new();
        let ours = vk::Semaphore::from_raw(100);
        let info = room.with_signal(&last, (ours, 42)).expect("appended");
        assert_eq!(info.command_buffer_count, 1);
        assert_eq!(
            info.p_command_buffers,
            cbs.as_ptr(),
            "the command buffers are the application's"
        );
        // SAFETY: `info` points into `room`, alive here.
        let (signals, chain) = unsafe {
            (
                std::slice::from_raw_parts(info.p_signal_semaphores, 3),
                &*info.p_next.cast::<vk::TimelineSemaphoreSubmitInfo<'_>>(),
            )
        };
        assert_eq!(signals, [app[0], app[1], ours]);
        assert_eq!(
            chain.s_type,
            vk::StructureType::TIMELINE_SEMAPHORE_SUBMIT_INFO
        );
        assert_eq!(chain.signal_semaphore_value_count, 3);
        assert_eq!(chain.wait_semaphore_value_count, 0);
        // SAFETY: as above.
        let values = unsafe { std::slice::from_raw_parts(chain.p_signal_semaphore_values, 3) };
        assert_eq!(values[2], 42);
    }

    #[test]
    fn a_batch_with_a_chain_or_too_many_signals_is_left_alone() {
        let mut timeline = vk::TimelineSemaphoreSubmitInfo::default();
        let chained = vk::SubmitInfo::default().push_next(&mut timeline);
        let ours = (vk::Semaphore::from_raw(100), 1);
        assert!(Appended::new().with_signal(&chained, ours).is_none());
        let many = semaphores(1..INLINE as u64 + 1);
        let crowded = vk::SubmitInfo::default().signal_semaphores(&many);
        assert!(Appended::new().with_signal(&crowded, ours).is_none());
        let fits = semaphores(1..INLINE as u64);
        let room_left = vk::SubmitInfo::default().signal_semaphores(&fits);
        assert!(Appended::new().with_signal(&room_left, ours).is_some());
    }

    #[test]
    fn submit2_carries_the_value_in_the_signal_itself() {
        let app = [vk::SemaphoreSubmitInfo::default().semaphore(vk::Semaphore::from_raw(5))];
        let last = vk::SubmitInfo2::default().signal_semaphore_infos(&app);
        let mut room = Appended2::new();
        let ours = vk::Semaphore::from_raw(100);
        let info = room.with_signal(&last, (ours, 7)).expect("appended");
        assert!(info.p_next.is_null());
        // SAFETY: `info` points into `room`, alive here.
        let signals = unsafe { std::slice::from_raw_parts(info.p_signal_semaphore_infos, 2) };
        assert_eq!(signals[0].semaphore, app[0].semaphore);
        assert_eq!((signals[1].semaphore, signals[1].value), (ours, 7));
        assert_eq!(signals[1].stage_mask, vk::PipelineStageFlags2::ALL_COMMANDS);
    }

    #[test]
    fn a_tail_with_a_copy_is_never_only_a_signal() {
        let signal = Some((vk::Semaphore::from_raw(1), 3));
        let copy = Some(vk::CommandBuffer::from_raw(2));
        assert_eq!(Tail { copy: None, signal }.signal_only(), signal);
        assert_eq!(Tail { copy, signal }.signal_only(), None);
    }
}
