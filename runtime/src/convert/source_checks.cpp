#include "source_checks.h"

#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/printable.h>
#include <glmrt/convert/loadable_check.h>
#include <glmrt/model_files/checkpoint_layers.h>
#include <glmrt/model_files/non_finite.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include "convert_destination.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

// Read this much of a copied tensor at a time (a multiple of every element size).
constexpr uint64_t kChunkBytes = 8u << 20;

void require_finite_tensor(const TensorDirectory& dir, const TensorInfo& t) {
  if (!is_float_dtype(t.dtype)) return;
  std::vector<std::byte> buffer;
  for (uint64_t at = 0; at < t.byte_size; at += kChunkBytes) {
    buffer.resize(std::min(kChunkBytes, t.byte_size - at));
    TensorInfo piece = t;  // read_raw reads a whole tensor: this chunk as one
    piece.offset = t.offset + at;
    piece.byte_size = buffer.size();
    dir.read_raw(piece, buffer);
    require_finite(dir, t, buffer, at / dtype_size(t.dtype));
  }
}

}  // namespace

std::array<int64_t, 2> fp8_block_of(const ordered_json& config, const fs::path& from) {
  const fs::path file = from / "config.json";
  const auto q = config.find("quantization_config");
  if (q == config.end() || q->is_null()) return {128, 128};
  if (!q->is_object())
    fail(
        "{}: key 'quantization_config' must be an object (FP8 block scales: {{\"quant_method\": "
        "\"fp8\", \"weight_block_size\": [128, 128]}}), found {}",
        file, printable(q->dump(), 200));
  if (const auto m = q->find("quant_method"); m != q->end() && *m != "fp8")
    fail(
        "{}: key 'quantization_config.quant_method' is {}: convert reads FP8 checkpoints with "
        "block scales (\"fp8\") or unquantized ones",
        file, printable(m->dump(), 200));
  const auto b = q->find("weight_block_size");
  if (b == q->end()) return {128, 128};
  if (!b->is_array() || b->size() != 2 || !(*b)[0].is_number_integer() ||
      !(*b)[1].is_number_integer() || (*b)[0].get<int64_t>() < 1 || (*b)[1].get<int64_t>() < 1)
    fail("{}: key 'quantization_config.weight_block_size' must be two positive integers, found {}",
         file, printable(b->dump(), 200));
  return {(*b)[0].get<int64_t>(), (*b)[1].get<int64_t>()};
}

void check_carried_files(const fs::path& from) {
  for (const char* name : kCarriedFiles) {
    const fs::path file = from / name;
    struct stat link {
    }, st{};
    if (::lstat(file.c_str(), &link) != 0) {
      if (errno == ENOENT) continue;  // absent: the container goes without it, as the source
      fail("--from {}: cannot check {}: {}", from.string(), file.string(), std::strerror(errno));
    }
    if (::stat(file.c_str(), &st) != 0)
      fail(
          "--from {}: {} is a symbolic link to a file that {}: glmrt run refuses such a "
          "model, and its container would lack the file; fix the link or remove it",
          from.string(), file.string(),
          errno == ENOENT ? "does not exist"
                          : fmt::format("cannot be read ({})", std::strerror(errno)));
    if (!S_ISREG(st.st_mode))
      fail("--from {}: {} is {}, expected a regular file (the container copies it)", from.string(),
           file.string(), describe_file_type(st.st_mode));
  }
}

void check_convertible(const ConversionPlan& plan, ModelConfig config, const ConvertOptions& o,
                       const TensorDirectory& source) {
  std::vector<TensorDirectory::PlannedFileHeader> headers;
  for (const PlannedFile& f : plan.layout.files)
    headers.push_back({f.name, f.header(), f.file_bytes()});
  try {
    const TensorDirectory planned = TensorDirectory::planned(headers, o.from);
    if (o.drop_mtp) config.num_nextn_predict_layers = 0;
    check_layer_count(config, CheckpointLayers::of(planned));
    check_loadable(config, planned, o.from);
  } catch (const Error& e) {
    fail("--from {}: the container converted from it would not load, so nothing is written: {}",
         o.from, e.what());
  }
  for (const auto& parts : plan.parts)
    for (const ConvertedPart& p : parts)
      if (p.kind == ConvertedPart::Kind::copy) require_finite_tensor(source, *p.source);
}

}  // namespace glmrt
