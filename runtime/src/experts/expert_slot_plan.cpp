#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/experts/expert_slot_plan.h>
#include <glmrt/weights/matrix.h>
#include <glmrt/weights/row_codec.h>
#include <glmrt/weights/stored_matrix.h>

#include <algorithm>

namespace glmrt {
namespace {

constexpr uint64_t kMatrixAlignment = 64;  // of converted matrices and copied scales

/// The layout's extents widened to the channel's alignment; spans that touch
/// or overlap once widened (a layer's scales packed together, say) become one
/// read, so no page is read twice.
std::vector<SlotRead> plan_reads(const ExpertLayout& layout, const IoChannel& channel) {
  std::vector<SlotRead> reads;
  for (const ExpertExtent& e : layout.extents) {
    const WidenedRead w = channel.plan(e.file, e.offset, e.length, nullptr).span;
    if (!reads.empty() && reads.back().file == e.file) {
      WidenedRead& last = reads.back().span;
      if (w.offset <= last.offset + last.length) {
        const uint64_t end = std::max(last.offset + last.length, w.offset + w.length);
        last.length = end - last.offset;
        last.expected = std::min(last.length, channel.file_size(e.file) - last.offset);
        continue;
      }
    }
    reads.push_back({e.file, w, 0});
  }
  uint64_t at = 0;
  for (SlotRead& r : reads) {
    r.at = at;
    at = align_up(at + r.span.length, channel.destination_alignment());
  }
  return reads;
}

/// Where the bytes of `t` land among `reads`.
uint64_t position_of(const TensorInfo& t, const std::vector<SlotRead>& reads) {
  for (const SlotRead& r : reads)
    if (r.file == t.file_index && t.offset >= r.span.offset &&
        t.offset + t.byte_size <= r.span.offset + r.span.length)
      return r.at + (t.offset - r.span.offset);
  fail("tensor {} is not inside any read of its expert", t.name);
}

/// The kernels' type of a tensor stored at `bits` precision as it is (F32
/// under f32, BF16 under bf16, under `stored` whatever element type holds its
/// bytes: F16 and ggml blocks too), or -1 when it needs converting.
int stored_as_kernels_type(const TensorInfo& t, WeightPrecision precision) {
  if (precision.stored) return kept_element_type(t);
  if (t.dtype == DType::F32 && precision.bits == WeightBits::f32) return GLMRT_F32;
  if (t.dtype == DType::BF16 && precision.bits == WeightBits::bf16) return GLMRT_BF16;
  return -1;
}

/// Alignment the kernels need of a matrix of `dtype` held as it is: its
/// element size; ggml blocks are read as bytes (plugin-support's block structs).
uint64_t in_place_alignment(DType dtype) {
  return dtype == DType::GGML ? 1 : dtype_size(dtype);
}

/// Whether matrix `t` can be used where it lands: pre-quantized, or already
/// at the profile's precision, aligned as the kernels need.
bool usable_in_place(const ExpertTensorPlace& t, WeightPrecision bits,
                     const std::vector<SlotRead>& reads) {
  if (t.scales) return true;
  if (stored_as_kernels_type(*t.values, bits) < 0) return false;
  return position_of(*t.values, reads) % in_place_alignment(t.values->dtype) == 0;
}

}  // namespace

ExpertSlotPlan plan_expert_slot(const ExpertLayout& layout, const IoChannel& channel,
                                WeightPrecision bits) {
  ExpertSlotPlan plan;
  plan.layout = &layout;
  try {
    plan.reads = plan_reads(layout, channel);
  } catch (const Error& e) {
    fail("expert tensor {}: {}", layout.tensors[0].values->name, e.what());
  }
  plan.direct =
      std::all_of(layout.tensors.begin(), layout.tensors.end(),
                  [&](const ExpertTensorPlace& t) { return usable_in_place(t, bits, plan.reads); });
  plan.read_bytes = plan.reads.empty() ? 0 : plan.reads.back().at + plan.reads.back().span.length;
  plan.read_bytes = align_up(plan.read_bytes, kMatrixAlignment);

  uint64_t slot_end = plan.direct ? plan.read_bytes : 0;
  for (size_t k = 0; k < 3; ++k) {
    const ExpertTensorPlace& t = layout.tensors[k];
    SlotMatrix& m = plan.matrices[k];
    m.rows = t.rows;
    m.cols = t.cols;
    if (t.scales) {
      m.type = static_cast<uint32_t>(t.packed_type);
    } else if (bits.stored || plan.direct) {
      const int kept = stored_as_kernels_type(*t.values, bits);
      if (kept < 0)
        fail(
            "expert tensor {} is {}, which no kernels element type holds as it is: precision "
            "`stored` keeps every weight in its file's type; choose f32, bf16 or an integer "
            "precision for the experts",
            printable(t.values->name),
            t.values->dtype == DType::GGML ? std::string(ggml_type_name(t.values->ggml_type))
                                           : std::string(dtype_name(t.values->dtype)));
      m.type = static_cast<uint32_t>(kept);
    } else {
      m.type = element_type_for(bits);
    }
    m.group_size = t.scales ? t.group_size : (plugin::is_quantized(m.type) ? bits.group : 0);
    m.row_bytes = plugin::packed_row_bytes(m.type, m.cols);
    m.source_values = position_of(*t.values, plan.reads);
    if (t.scales) m.source_scales = position_of(*t.scales, plan.reads);
    if (plan.direct) {
      m.data = m.source_values;
      m.scales = m.source_scales;
      if (t.scales && m.scales % alignof(float) != 0) {
        const uint64_t to = align_up(slot_end, kMatrixAlignment);
        plan.scale_copies.push_back({m.scales, to, t.scales->byte_size});
        m.scales = to;
        slot_end = to + t.scales->byte_size;
      }
      continue;
    }
    m.data = align_up(slot_end, kMatrixAlignment);
    slot_end = m.data + static_cast<uint64_t>(m.row_bytes * m.rows);
    if (plugin::is_quantized(m.type)) {
      m.scales = align_up(slot_end, kMatrixAlignment);
      slot_end = m.scales +
                 static_cast<uint64_t>(m.rows) *
                     static_cast<uint64_t>(MatrixStorage::scales_per_row_of(m.cols, m.group_size)) *
                     sizeof(float);
    }
  }
  plan.slot_bytes = align_up(std::max<uint64_t>(slot_end, 1), kMatrixAlignment);
  return plan;
}

}  // namespace glmrt
