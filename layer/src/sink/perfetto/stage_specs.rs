//! The specifications a Perfetto sequence interns before the stages that use them: the
//! queue's track and each stage's name (its spec's, or a label's text), sent the first time
//! a sequence meets them (see `render_stages`).

use std::borrow::Cow;

use perfetto_sdk::data_source::TraceContext;
use perfetto_sdk::protos::trace::interned_data::interned_data::InternedData;
use perfetto_sdk::protos::trace::trace_packet::{TracePacket, TracePacketSequenceFlags};
use perfetto_sdk_protos_gpu::protos::trace::gpu::gpu_render_stage_event::{
    InternedGpuRenderStageSpecification,
    InternedGpuRenderStageSpecificationRenderStageCategory as StageCategory,
};
use perfetto_sdk_protos_gpu::protos::trace::interned_data::interned_data::prelude::*;

use super::render_stages::RenderStageSink;
use super::sequence::SequenceState;
use super::stage_pairs::Range;
use crate::sink::BatchInfo;
use crate::trace::tracepoints::Category;

/// What an interned specification adds beyond its name, counted generously.
const SPEC_FRAMING: u64 = 24;

/// What names a stage: its spec (a static name) or a label's text.
enum StageKey<'a> {
    Spec(&'static str),
    Label(Cow<'a, str>),
}

/// A specification to intern before the events that use it.
struct NewSpec<'a> {
    iid: u64,
    name: Cow<'a, str>,
    /// Empty for none.
    description: String,
    category: StageCategory,
}

impl RenderStageSink {
    /// Interns the queue and every stage of `slice` (their iids into `self.stage_iids`),
    /// sending the new ones before the events that use them. Returns the queue's iid and
    /// the bytes sent (counted generously, for `file_drain`).
    pub(super) fn intern<'s>(
        &mut self,
        ctx: &mut TraceContext<'_, SequenceState>,
        state: &mut SequenceState,
        info: &BatchInfo,
        slice: &'s [Range<'_>],
    ) -> (u64, u64) {
        let mut new_specs: Vec<NewSpec<'s>> = Vec::new();
        let queue_iid = match state.queues.get(&info.queue) {
            Some(iid) => *iid,
            None => {
                let iid = state.next_iid();
                state.queues.insert(info.queue, iid);
                new_specs.push(self.queue_spec(iid, info));
                iid
            }
        };
        self.stage_iids.clear();
        for range in slice {
            let e = &range.begin;
            let tp = e.info();
            // A label's stage is named by the label; other stages by the spec.
            let key = match e.payload().label() {
                Some(label) => StageKey::Label(String::from_utf8_lossy(label.bytes(e.strings))),
                None => StageKey::Spec(tp.stage.unwrap_or(tp.name)),
            };
            let known = match &key {
                StageKey::Spec(name) => state.stages.get(name),
                StageKey::Label(name) => state.labels.get(name.as_ref()),
            };
            let iid = match known {
                Some(iid) => *iid,
                None => {
                    let iid = state.next_iid();
                    let name = match key {
                        StageKey::Spec(name) => {
                            state.stages.insert(name, iid);
                            Cow::Borrowed(name)
                        }
                        StageKey::Label(name) => {
                            state.labels.insert(name.clone().into_owned(), iid);
                            name
                        }
                    };
                    new_specs.push(NewSpec {
                        iid,
                        name,
                        description: String::new(),
                        category: stage_category(tp.category),
                    });
                    iid
                }
            };
            self.stage_iids.push(iid);
        }
        let interned = new_specs
            .iter()
            .map(|s| (s.name.len() + s.description.len()) as u64 + SPEC_FRAMING)
            .sum();
        if !new_specs.is_empty() {
            ctx.add_packet(|packet: &mut TracePacket| {
                packet
                    .set_sequence_flags(TracePacketSequenceFlags::SeqNeedsIncrementalState.into());
                packet.set_interned_data(|data: &mut InternedData| {
                    for spec in &new_specs {
                        data.set_gpu_specifications(
                            |s: &mut InternedGpuRenderStageSpecification| {
                                s.set_iid(spec.iid);
                                s.msg.append_type2_field(2, spec.name.as_bytes());
                                if !spec.description.is_empty() {
                                    s.msg.append_type2_field(3, spec.description.as_bytes());
                                }
                                s.set_category(spec.category);
                            },
                        );
                    }
                });
            });
        }
        (queue_iid, interned)
    }

    /// A queue's track: named by the application (`vkSetDebugUtilsObjectNameEXT`) or by its
    /// family and index; its handle in the description, and the bound of a measured clock.
    fn queue_spec(&self, iid: u64, info: &BatchInfo) -> NewSpec<'static> {
        const VK_OBJECT_TYPE_QUEUE: i32 = 4;
        let named = self
            .header
            .names
            .lock()
            .iter()
            .rev()
            .find(|n| n.object_type == VK_OBJECT_TYPE_QUEUE && n.object == info.queue)
            .map(|n| n.name.clone());
        let name = match named {
            Some(name) => name,
            None => format!("Vulkan queue {}.{}", info.queue_family, info.queue_index),
        };
        NewSpec {
            iid,
            name: Cow::Owned(name),
            description: format!(
                "VkQueue {:#x}: family {}, index {}{}",
                info.queue,
                info.queue_family,
                info.queue_index,
                self.header.clock_note().unwrap_or_default()
            ),
            category: StageCategory::Other,
        }
    }
}

/// Perfetto knows graphics and compute stages; transfers and the rest are "other".
fn stage_category(category: Option<Category>) -> StageCategory {
    match category {
        Some(Category::Graphics) => StageCategory::Graphics,
        Some(Category::Compute) => StageCategory::Compute,
        _ => StageCategory::Other,
    }
}
