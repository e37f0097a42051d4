//! A recording's pipeline statistics queries (`GPU_TRACE_COUNTERS=pipeline`, see
//! `record::statistics`): begun and ended around the innermost ranges that get them, and
//! each range closed at its end event.

use ash::vk;

use super::{CommandTrace, WriteState};
use crate::gpu::interface::{RunSlot, SLOT_VALUES};
use crate::gpu::statistics_queries::POOL_QUERIES;
use crate::trace::record::chunk::ChunkPool;
use crate::trace::record::recorded_stats::{RecordedStats, Source};
use crate::trace::record::recorder::Recorder;
use crate::trace::record::statistics::{Shown, StatsRecording};

impl<const MAX_WORDS: usize> CommandTrace<MAX_WORDS> {
    /// Whether a counted command's range of `shown` gets a query in this recording: its
    /// hook then takes the slow path, which begins and ends it.
    pub fn counts_range(&self, shown: Shown) -> bool {
        self.stats.is_some() && (shown == Shown::Compute || draws_counted())
    }

    /// This recording gets statistics of `statistics` (a primary, not simultaneous-use, of
    /// a family that has them).
    /// A reusable recording's first pool is reset by the command buffer itself, here at its
    /// begin (outside any render pass), so that every run finds its queries reset. A
    /// one-time recording's pools come reset (on the host) and it runs once: it records no
    /// reset, so that an application's own query that must be the first command (a
    /// performance query of command-buffer scope) still is.
    pub fn count_statistics(
        &mut self,
        rec: &Recorder<'_>,
        statistics: vk::QueryPipelineStatisticFlags,
    ) {
        let mut stats = StatsRecording::new(statistics, !self.one_time);
        let Some(pool) = stats.first_pool(&rec.chunks.statistics) else {
            return;
        };
        if !self.one_time {
            // SAFETY: the command buffer was just begun (a primary: outside any render
            // pass); the pool is this recording's.
            unsafe { rec.chunks.backend().reset_statistics(rec.cmd, pool) };
        }
        self.stats = Some(Box::new(stats));
    }

    /// Begins a statistics query where one may be begun: none active, a timestamp may be
    /// written here (not in a subpass of secondaries, nor between a suspension and its
    /// resumption). In a multiview subpass a query takes one per view, consecutive, and
    /// the range sums them (a driver may spread the views' work over them or put it all in
    /// the first); where the driver leaves all but the first unavailable (Lavapipe 22.3:
    /// see `DeviceCaps::multiview_queries_complete`), which a run's copy (it waits for its
    /// queries) would wait for forever, such subpasses are not counted.
    pub fn begin_statistics(&mut self, rec: &Recorder<'_>) {
        if !self.is_instrumented() || self.write_state == WriteState::Suspended {
            return;
        }
        if self.stats.as_deref().is_some_and(|s| s.spanning) {
            // The render pass instance's query counts everything inside it.
            return;
        }
        let views = self.views;
        let uncounted_views =
            views != 1 && !rec.chunks.backend().caps().multiview_queries_complete();
        if self.write_state == WriteState::SecondaryContents || uncounted_views {
            // Part of a render pass that is not measured: the pass says so.
            if let Some(stats) = self.stats.as_deref_mut() {
                stats.partial = true;
            }
            return;
        }
        let Some(stats) = self.stats.as_deref_mut() else {
            return;
        };
        if stats.active.is_some() {
            return;
        }
        if stats.application_active {
            // The application's own query is active: this range goes without.
            stats.partial = true;
            said_once();
            return;
        }
        let Some((pool, query)) = stats.take(&rec.chunks.statistics, views) else {
            // No query for it: the range, and those around it, say so.
            stats.partial = true;
            no_query_said_once();
            return;
        };
        // SAFETY: the command buffer is recording (inside the application's call); no
        // statistics query of the layer's is active; the query was reset when its pool
        // was handed out and is used once in this recording, which runs once.
        unsafe {
            rec.chunks
                .backend()
                .begin_statistics(rec.cmd, pool, query.query)
        };
        stats.active = Some((query, views));
    }

    /// A counted command's range begins (after its start timestamp): a dispatch always
    /// gets a query; a draw only where draws are counted (see [`Self::begin_subpass_statistics`]).
    pub fn begin_range_statistics(&mut self, rec: &Recorder<'_>, shown: Shown) {
        if shown == Shown::Compute || draws_counted() {
            self.begin_statistics(rec);
        }
    }

    /// A counted command's range ends (before its end timestamp): the query
    /// [`Self::begin_range_statistics`] began, and no other (a subpass's goes on).
    pub fn end_range_statistics(&mut self, rec: &Recorder<'_>, shown: Shown) {
        if shown == Shown::Compute || draws_counted() {
            self.end_statistics(rec);
        }
    }

    /// A counted command's end tracepoint was just recorded (`before` events before it):
    /// its range takes the queries it ended (a draw's, only where draws are counted: else
    /// they are its subpass's).
    pub fn close_range_statistics(&mut self, before: usize, shown: Shown) {
        if shown == Shown::Compute || draws_counted() {
            self.close_statistics(before, shown);
        }
    }

    /// A render pass instance (or a subpass of it) begins: a query for the subpass, unless
    /// draws are counted (each then gets its own, and the pass sums them).
    pub fn begin_subpass_statistics(&mut self, rec: &Recorder<'_>) {
        if !draws_counted() || self.write_state == WriteState::SecondaryContents {
            // (A subpass of secondaries is not measured either way: `begin_statistics`
            // marks its pass partial.)
            self.begin_statistics(rec);
        }
    }

    /// A render pass instance begins (after its begin command).
    pub fn open_pass_statistics(&mut self) {
        if let Some(stats) = self.stats.as_deref_mut() {
            stats.open_pass();
        }
    }

    /// The render pass instance whose end tracepoint was just recorded (`before` events
    /// before it) gets the sum of its subpasses' or its draws' queries.
    pub fn close_pass_statistics(&mut self, before: usize) {
        let event = self.just_recorded(before);
        if let Some(stats) = self.stats.as_deref_mut() {
            stats.close_pass(event);
        }
    }

    /// Before a render pass instance begins (before its start tracepoint), where its
    /// (first) subpass's contents are secondaries (`secondaries`) and a statistics query
    /// may be active across `vkCmdExecuteCommands`: a query spanning the whole instance
    /// begins here, outside it (in a subpass of secondaries the primary may record nothing
    /// but `vkCmdExecuteCommands`), and ends after it ([`Self::end_pass_statistics`]). Only
    /// for an instance of one subpass of one view (dynamic rendering, or a render pass of
    /// one subpass): the primary then records no query of its own inside it, which the
    /// spanning one would overlap, and multiview's consecutive queries do not arise.
    pub fn begin_pass_statistics(&mut self, rec: &Recorder<'_>, secondaries: bool, single: bool) {
        let across = rec.chunks.backend().statistics_across_secondaries();
        if !(secondaries && single && across) || self.stats.is_none() {
            return;
        }
        self.begin_statistics(rec);
        if let Some(stats) = self.stats.as_deref_mut() {
            stats.spanning = stats.active.is_some();
        }
    }

    /// `vkCmdExecuteCommands` (after its start tracepoint), where a statistics query may be
    /// active across it: outside a render pass a query spans it, so that the secondaries'
    /// work (dispatches, there) counts in its range; inside one, the query spanning the
    /// instance counts it.
    pub fn begin_execute_statistics(&mut self, rec: &Recorder<'_>) {
        if rec.chunks.backend().statistics_across_secondaries() {
            self.begin_statistics(rec);
        }
    }

    /// `vkCmdExecuteCommands` (before its end tracepoint): the query spanning it ends.
    pub fn end_execute_statistics(&mut self, rec: &Recorder<'_>) {
        if rec.chunks.backend().statistics_across_secondaries() {
            self.end_statistics(rec);
        }
    }

    /// `vkCmdExecuteCommands`'s end tracepoint was just recorded (`before` events before
    /// it): its range takes the query that spanned it.
    pub fn close_execute_statistics(&mut self, rec: &Recorder<'_>, before: usize) {
        if rec.chunks.backend().statistics_across_secondaries() {
            self.close_statistics(before, Shown::Compute);
        }
    }

    /// After a render pass instance ended (after its end tracepoint, before its range is
    /// closed): the query spanning it ends, outside it, where one does.
    pub fn end_pass_statistics(&mut self, rec: &Recorder<'_>) {
        if let Some(stats) = self.stats.as_deref_mut() {
            if std::mem::take(&mut stats.spanning) {
                self.end_active_statistics(rec);
            }
        }
    }

    /// Ends the query [`Self::begin_statistics`] began, if any (in the same subpass), but
    /// not one spanning a render pass instance (which ends after it).
    pub fn end_statistics(&mut self, rec: &Recorder<'_>) {
        if self.stats.as_deref().is_some_and(|s| s.spanning) {
            return;
        }
        self.end_active_statistics(rec);
    }

    /// Ends the active query, if any.
    fn end_active_statistics(&mut self, rec: &Recorder<'_>) {
        let Some(stats) = self.stats.as_deref_mut() else {
            return;
        };
        let Some((query, views)) = stats.active.take() else {
            return;
        };
        let pool = stats.pool_of(query);
        // SAFETY: the query active in the command buffer, begun in this subpass (or
        // outside any render pass).
        unsafe {
            rec.chunks
                .backend()
                .end_statistics(rec.cmd, pool, query.query)
        };
        stats.ended_views(query, views);
    }

    /// The application begins a pipeline statistics query of its own: the layer's, if one
    /// is active, ends first (in the same subpass, or around the same command), and the
    /// range it served is partial; none begins until the application's ends.
    pub fn application_statistics_begin(&mut self, rec: &Recorder<'_>) {
        let Some(stats) = self.stats.as_deref_mut() else {
            return;
        };
        stats.application_active = true;
        if stats.active.is_some() {
            self.end_statistics(rec);
            if let Some(stats) = self.stats.as_deref_mut() {
                stats.resume_after_application = true;
                stats.partial = true;
            }
            said_once();
        }
    }

    /// The application's own statistics query ends: the layer's range goes on counting if
    /// its query was ended for it.
    pub fn application_statistics_end(&mut self, rec: &Recorder<'_>) {
        let Some(stats) = self.stats.as_deref_mut() else {
            return;
        };
        stats.application_active = false;
        if std::mem::take(&mut stats.resume_after_application) {
            self.begin_statistics(rec);
        }
    }

    /// How many events the recording has: before a range's end tracepoint, for
    /// [`Self::close_statistics`].
    pub fn events_len(&self) -> usize {
        self.events.len()
    }

    /// The queries ended since the last range go to the range whose end tracepoint was
    /// just recorded (`before` events before it); nowhere if it was not.
    pub fn close_statistics(&mut self, before: usize, shown: Shown) {
        let event = self.just_recorded(before);
        if let Some(stats) = self.stats.as_deref_mut() {
            stats.close(event, shown);
        }
    }

    /// The event an end tracepoint just recorded (`before` events before it): the last, if
    /// it recorded any (a start held back until then is recorded with it); `None` when it
    /// recorded nothing (its tracepoint is off, or the trace is full).
    pub fn just_recorded(&self, before: usize) -> Option<u32> {
        (self.events.len() > before).then(|| self.events.len() as u32 - 1)
    }

    /// At the recording's end (after `end_cmd_buffer`, event `end_event` where it was
    /// recorded, after the copy of its timestamps into `run_slot` if it has one, `slots`
    /// values): what the frozen trace keeps. A
    /// one-time run is read from its queries; a tracked reusable one copies them after its
    /// timestamps, where the slot has room; one the layer does not track (`tracked`
    /// false: every run goes wrapped) has the layer's copy after each run copy them.
    pub(super) fn freeze_statistics(
        &mut self,
        rec: (&ChunkPool, vk::CommandBuffer),
        (run_slot, tracked): (Option<RunSlot>, bool),
        (slots, end_event): (u32, Option<u32>),
    ) -> Option<RecordedStats> {
        let stats = self.stats.take()?;
        let in_run = stats.run_values();
        let source = match (self.one_time, run_slot, stats.first()) {
            // No query taken (none could be: a multiview subpass on a driver that leaves
            // their views unavailable, say): nothing to read, its ranges only say partial.
            _ if in_run == 0 => Source::Pool,
            (true, _, _) => Source::Pool,
            (false, Some(slot), Some((pool, used)))
                if in_run > 0 && slots + in_run <= SLOT_VALUES =>
            {
                let per_query = stats.statistics.as_raw().count_ones();
                // SAFETY: at the recording's end, outside any render pass, after its last
                // statistics query ended; the slot holds `slots + in_run` values.
                unsafe {
                    rec.0.backend().record_statistics_copy(
                        rec.1,
                        (pool, used, per_query),
                        slot,
                        slots,
                    )
                };
                Source::Run(in_run)
            }
            (false, _, Some(_)) if !tracked => Source::Copied(in_run),
            (false, _, Some(_)) if in_run > 0 => {
                unread_said_once(slots, in_run);
                Source::Unread
            }
            _ => Source::Unread,
        };
        Some((*stats).freeze(end_event, source))
    }
}

/// Says, once per process, that a range got no statistics query.
fn no_query_said_once() {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        log::warn!("a range got no pipeline statistics query and says partial=1: a reusable command buffer counts at most {POOL_QUERIES} ranges a recording (its one query pool, which each run resets at its begin), or a query pool could not be made");
    }
}

/// Says, once per process, why a tracked reusable recording that counted ranges gets no
/// counters: its slot has no room for its statistics after its `slots` timestamps
/// (`in_run` values).
fn unread_said_once(slots: u32, in_run: u32) {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        log::warn!("a reusable command buffer's pipeline statistics ({in_run} values) do not fit its run slot after its {slots} timestamps ({SLOT_VALUES} in all), or memory for the slot was short: its ranges get no counters");
    }
}

/// Says, once per process, that an application's own statistics query overlapped a range.
fn said_once() {
    static SAID: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    if !SAID.swap(true, std::sync::atomic::Ordering::Relaxed) {
        log::warn!("an application's own pipeline statistics query overlapped a counted range: the layer's query gave way, and such ranges are marked partial");
    }
}

/// Whether draws are counted: every draw tracepoint is on, so that each draw gets a query
/// of its own (and no subpass does). With any of them off, subpasses are counted instead,
/// so that the draws not traced are not left out.
fn draws_counted() -> bool {
    use crate::trace::tracepoints::{toggle, TOGGLES};
    [
        toggle::DRAW,
        toggle::DRAW_INDEXED,
        toggle::DRAW_INDIRECT,
        toggle::DRAW_INDIRECT_COUNT,
        toggle::DRAW_MULTI,
        toggle::DRAW_MESH_TASKS,
    ]
    .iter()
    .all(|&t| TOGGLES[t].is_enabled())
}
