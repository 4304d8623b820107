#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/plugin/weight_format.h>
#include <glmrt/weights/stored_matrix.h>

#include <fmt/ranges.h>

namespace glmrt {
namespace {

int packed_type_of(StampedFormat stamp, uint32_t group) {
  const auto p = stamped_precision(stamp, group);
  if (!p || !p->quantized()) return -1;
  return static_cast<int>(weight_element_type(*p));
}

uint64_t packed_bytes(uint32_t type, int64_t rows, int64_t cols) {
  return static_cast<uint64_t>(rows * plugin::packed_row_bytes(type, cols));
}

// Without a stamp the byte count tells the format; int8 is tried first, as the
// seed program does (it decides the same way). int3, which the seed never
// wrote, needs its stamp.
int packed_type_from_bytes(uint64_t bytes, int64_t rows, int64_t cols) {
  for (uint32_t type : {GLMRT_I8, GLMRT_I4, GLMRT_I2})
    if (bytes == packed_bytes(type, rows, cols)) return static_cast<int>(type);
  return -1;
}

// Per-group scales `<name>.gqs`: F32 [rows, ceil(cols / g)].
StoredMatrix grouped(const TensorDirectory& dir, const std::string& name, StoredMatrix m) {
  const TensorInfo& t = *m.values;
  const TensorInfo& s = *m.scales;
  const auto& file = dir.files().at(s.file_index);
  if (s.dtype != DType::F32 || s.shape.size() != 2 || s.shape[0] != m.rows || s.shape[1] < 1)
    fail("tensor {}.gqs in {}: expected F32 per-group scales of shape [{}, groups], found {} [{}]",
         name, file, m.rows, dtype_name(s.dtype), fmt::join(s.shape, ", "));
  const int64_t groups = s.shape[1];
  uint32_t g = t.stamp_group;
  if (g == 0 && m.cols % groups == 0) g = static_cast<uint32_t>(m.cols / groups);
  if (g == 0)
    fail(
        "tensor {} in {}: per-group scales {}.gqs have {} groups per row, which does not divide "
        "the {} columns; a stamp such as \"int4-g64\" must say the group size",
        name, dir.files().at(t.file_index), name, groups, m.cols);
  if (g % 8 != 0 || (m.cols + g - 1) / g != groups)
    fail(
        "tensor {}.gqs in {}: {} groups per row do not fit {} columns in groups of {} (expected "
        "{}; group sizes are multiples of 8)",
        name, file, groups, m.cols, g, (m.cols + g - 1) / g);
  m.group_size = g;
  return m;
}

StoredMatrix packed(const TensorDirectory& dir, const std::string& name, StoredMatrix m) {
  const TensorInfo& t = *m.values;
  const auto& file = dir.files().at(t.file_index);
  if (t.stamp == StampedFormat::f32 || t.stamp == StampedFormat::bf16)
    fail(
        "tensor {} in {} is stamped {} but has per-row scales {}.qs, which only packed "
        "int8/int4/int2 tensors carry",
        name, file, stamped_format_name(t.stamp), name);
  if (t.dtype != DType::U8 && t.dtype != DType::I8)
    fail(
        "tensor {} in {}: pre-quantized data (it has scales {}.qs) must be U8 holding a {}x{} "
        "int8/int4/int2 matrix, found {}",
        name, file, name, m.rows, m.cols, dtype_name(t.dtype));
  int type = packed_type_of(t.stamp, t.stamp_group);
  if (type >= 0) {
    const uint64_t expected = packed_bytes(static_cast<uint32_t>(type), m.rows, m.cols);
    if (t.byte_size != expected)
      fail(
          "tensor {} in {} is stamped {}, which for the {}x{} matrix the config implies takes {} "
          "bytes, but it holds {} bytes",
          name, file, stamped_format_name(t.stamp), m.rows, m.cols, expected, t.byte_size);
  } else {
    type = packed_type_from_bytes(t.byte_size, m.rows, m.cols);
    if (type < 0)
      fail(
          "tensor {} in {}: {} bytes fit no packed format of a {}x{} matrix (int8 takes {}, int4 "
          "{}, int2 {}; int3 needs a stamp)",
          name, file, t.byte_size, m.rows, m.cols, packed_bytes(GLMRT_I8, m.rows, m.cols),
          packed_bytes(GLMRT_I4, m.rows, m.cols), packed_bytes(GLMRT_I2, m.rows, m.cols));
  }
  m.packed_type = static_cast<uint32_t>(type);
  const TensorInfo& s = *m.scales;
  if (s.name.ends_with(".gqs")) return grouped(dir, name, m);
  if (t.stamp_group != 0)
    fail(
        "tensor {} in {} is stamped {}-g{} (per-group) but has per-row scales {}.qs instead of "
        "{}.gqs",
        name, file, stamped_format_name(t.stamp), t.stamp_group, name, name);
  if (s.dtype != DType::F32 || s.shape != std::vector<int64_t>{m.rows})
    fail("tensor {}.qs in {}: expected F32 per-row scales of shape [{}], found {} [{}]", name,
         dir.files().at(s.file_index), m.rows, dtype_name(s.dtype), fmt::join(s.shape, ", "));
  return m;
}

}  // namespace

int StoredMatrix::element_type() const {
  if (prequantized()) return static_cast<int>(packed_type);
  if (values->dtype == DType::F32) return GLMRT_F32;
  if (values->dtype == DType::BF16) return GLMRT_BF16;
  return -1;
}

int kept_element_type(const TensorInfo& t) {
  switch (t.dtype) {
    case DType::F32:
      return GLMRT_F32;
    case DType::BF16:
      return GLMRT_BF16;
    case DType::F16:
      return static_cast<int>(plugin::ggml_element_type(GLMRT_GGML_F16));
    case DType::GGML:
      if (plugin::is_ggml_blocks(plugin::ggml_element_type(t.ggml_type)))
        return static_cast<int>(plugin::ggml_element_type(t.ggml_type));
      return -1;
    default:
      return -1;
  }
}

void fail_not_keepable(const TensorDirectory& dir, const TensorInfo& t) {
  fail(
      "tensor {} in {} is {}, which no kernels element type holds as it is: precision `stored` "
      "keeps every weight in its file's type; choose f32, bf16 or an integer precision instead",
      printable(t.name), dir.files().at(t.file_index).string(),
      t.dtype == DType::GGML ? std::string(ggml_type_name(t.ggml_type))
                             : std::string(dtype_name(t.dtype)));
}

int StoredMatrix::kept_element_type() const {
  if (prequantized()) return static_cast<int>(packed_type);
  return glmrt::kept_element_type(*values);
}

std::string StoredMatrix::format_name() const {
  const int type = element_type();
  if (type >= 0 && group_size && !plugin::is_two_level(static_cast<uint32_t>(type)))
    return fmt::format("{}-g{}", plugin::element_type_name(static_cast<uint32_t>(type)),
                       group_size);
  if (type >= 0) return plugin::element_type_name(static_cast<uint32_t>(type));
  if (values->dtype == DType::GGML) return std::string(ggml_type_name(values->ggml_type));
  return std::string(dtype_name(values->dtype));
}

StoredMatrix find_stored_matrix(const TensorDirectory& dir, const std::string& name, int64_t rows,
                                int64_t cols) {
  StoredMatrix m;
  m.rows = rows;
  m.cols = cols;
  m.values = &dir.at(name);
  m.scales = dir.find(name + ".qs");
  if (const TensorInfo* gqs = dir.find(name + ".gqs")) {
    if (m.scales)
      fail("tensor {} in {} has both per-row scales {}.qs and per-group scales {}.gqs", name,
           dir.files().at(m.values->file_index), name, name);
    m.scales = gqs;
  }
  if (m.scales) return packed(dir, name, m);
  const TensorInfo& t = *m.values;
  const auto& file = dir.files().at(t.file_index);
  if (packed_type_of(t.stamp, t.stamp_group) >= 0)
    fail("tensor {} in {} is stamped {} but its scales ({}.qs or {}.gqs) are missing", name, file,
         stamped_format_name(t.stamp), name, name);
  if (!is_float_dtype(t.dtype) && t.dtype != DType::GGML)
    fail(
        "tensor {} in {} is {}: a weight matrix is F32, BF16, F16 or F64, or packed U8 with "
        "per-row scales in {}.qs, or ggml blocks of a GGUF",
        name, file, dtype_name(t.dtype), name);
  if (t.shape != std::vector<int64_t>{rows, cols})
    fail("tensor {} in {} has shape [{}], the config implies [{}, {}]", name, file,
         fmt::join(t.shape, ", "), rows, cols);
  return m;
}

}  // namespace glmrt
