#include "container_twin.h"

#include <fmt/format.h>
#include <glmrt/plugin/weight_format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string_view>

#include "checkpoint_generator.h"
#include "safetensors_writer.h"

namespace glmrt::test {
namespace {

int qmax_of(uint32_t type) {
  return type == GLMRT_I8 ? 127 : type == GLMRT_I4 ? 7 : 1;
}

bool is_routed_expert(const std::string& name) {
  return name.find(".mlp.experts.") != std::string::npos;
}

bool is_boundary(const std::string& name) {
  return name == "model.embed_tokens.weight" || name == "lm_head.weight" ||
         name.ends_with(".embed_tokens.weight") || name.ends_with(".shared_head.head.weight");
}

// Packs one row of values q (already in range) as `type`.
void pack_row(const std::vector<int>& q, uint32_t type, std::vector<float>& out) {
  const int64_t cols = static_cast<int64_t>(q.size());
  const int64_t row_bytes = plugin::packed_row_bytes(type, cols);
  for (int64_t b = 0; b < row_bytes; ++b) {
    int byte = 0;
    if (type == GLMRT_I8) {
      byte = static_cast<uint8_t>(static_cast<int8_t>(q[b]));
    } else if (type == GLMRT_I4) {
      const int lo = q[2 * b] + 8, hi = 2 * b + 1 < cols ? q[2 * b + 1] + 8 : 8;
      byte = lo | (hi << 4);
    } else {
      for (int k = 0; k < 4; ++k) byte |= (4 * b + k < cols ? q[4 * b + k] + 2 : 2) << (2 * k);
    }
    out.push_back(static_cast<float>(byte));
  }
}

struct Placed {
  HostTensor tensor;
  uint64_t offset;
};

uint64_t align_up(uint64_t v, uint64_t a) {
  return (v + a - 1) / a * a;
}

std::string stamp_json(const TensorList& tensors, const ContainerSpec& spec) {
  nlohmann::ordered_json stamps = nlohmann::ordered_json::object();
  for (const HostTensor& t : tensors) {
    if (t.dtype == StoredDType::u8) {
      const uint32_t type = container_type_of(t.name, spec);
      stamps[t.name] = type == GLMRT_I8 ? "int8" : type == GLMRT_I4 ? "int4" : "int2";
    } else if (t.dtype == StoredDType::f32) {
      stamps[t.name] = "f32";
    } else if (t.dtype == StoredDType::bf16) {
      stamps[t.name] = "bf16";
    }
  }
  return stamps.dump();
}

void write_file(const std::filesystem::path& file, std::vector<Placed> placed, uint64_t alignment,
                const ContainerSpec& spec) {
  std::sort(placed.begin(), placed.end(),
            [](const Placed& a, const Placed& b) { return a.offset < b.offset; });
  TensorList tensors;
  FileLayout layout;
  layout.data_alignment = alignment;
  for (Placed& p : placed) {
    layout.offsets.push_back(p.offset);
    tensors.push_back(std::move(p.tensor));
  }
  if (spec.stamp) layout.metadata["quant_formats"] = stamp_json(tensors, spec);
  write_safetensors_file(file, tensors, layout);
}

// Splits the container's tensors into experts (by layer and expert), their
// scales, and the rest, keeping the checkpoint's order.
struct Parts {
  // layer -> expert -> [gate, up, down] values then scales
  std::map<int, std::map<int, std::vector<HostTensor>>> experts;
  TensorList resident;
};

// Reads a decimal number at the front of `text` and drops it; nullopt when none.
std::optional<int> take_number(std::string_view& text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  text.remove_prefix(static_cast<size_t>(end - text.data()));
  return value;
}

// (layer, expert) of "model.layers.L.mlp.experts.E.<rest>". Parsed by hand:
// GCC 12's std::regex trips -Werror=maybe-uninitialized in the sanitizer build.
std::optional<std::pair<int, int>> expert_of(std::string_view name) {
  constexpr std::string_view kLayers = "model.layers.", kExperts = ".mlp.experts.";
  if (!name.starts_with(kLayers)) return std::nullopt;
  name.remove_prefix(kLayers.size());
  const auto layer = take_number(name);
  if (!layer || !name.starts_with(kExperts)) return std::nullopt;
  name.remove_prefix(kExperts.size());
  const auto expert = take_number(name);
  if (!expert || !name.starts_with('.')) return std::nullopt;
  return std::pair{*layer, *expert};
}

Parts split(TensorList tensors) {
  Parts parts;
  for (HostTensor& t : tensors) {
    if (const auto at = expert_of(t.name)) {
      parts.experts[at->first][at->second].push_back(std::move(t));
    } else {
      parts.resident.push_back(std::move(t));
    }
  }
  return parts;
}

bool is_scales(const HostTensor& t) {
  return t.name.ends_with(".qs");
}

}  // namespace

uint32_t container_type_of(const std::string& name, const ContainerSpec& spec) {
  if (!name.ends_with(".weight")) return 0;
  if (is_routed_expert(name)) return spec.quantize_experts ? spec.expert_type : 0;
  if (is_boundary(name)) return spec.quantize_boundary ? spec.dense_type : 0;
  if (name.ends_with("layernorm.weight") || name.ends_with("norm.weight") ||
      name.ends_with(".mlp.gate.weight") || name.ends_with("indexer.weights_proj.weight"))
    return 0;
  return spec.dense_type;
}

void snap_to_quantization_grid(TensorList& tensors, const ContainerSpec& spec) {
  for (HostTensor& t : tensors) {
    const uint32_t type = container_type_of(t.name, spec);
    if (type == 0 || t.shape.size() != 2) continue;
    const int qmax = qmax_of(type);
    const int64_t rows = t.shape[0], cols = t.shape[1];
    for (int64_t r = 0; r < rows; ++r) {
      float* w = t.values.data() + r * cols;
      int64_t top = 0;
      for (int64_t i = 1; i < cols; ++i)
        if (std::fabs(w[i]) > std::fabs(w[top])) top = i;
      const float amax = std::fabs(w[top]);
      if (amax == 0.f) continue;
      const float s = std::ldexp(1.f, static_cast<int>(std::ceil(std::log2(amax / qmax))));
      for (int64_t i = 0; i < cols; ++i) {
        const int q = std::clamp(static_cast<int>(std::lrintf(w[i] / s)), -qmax, qmax);
        w[i] = static_cast<float>(i == top ? (w[i] < 0 ? -qmax : qmax) : q) * s;
      }
    }
  }
}

std::pair<HostTensor, HostTensor> quantize_rows(const HostTensor& m, uint32_t type) {
  if (m.shape.size() != 2) throw std::invalid_argument(m.name + " is not a matrix");
  const int qmax = qmax_of(type);
  const int64_t rows = m.shape[0], cols = m.shape[1];
  HostTensor packed{m.name, {rows, plugin::packed_row_bytes(type, cols)}, {}, StoredDType::u8};
  HostTensor scales{m.name + ".qs", {rows}, {}, StoredDType::f32};
  std::vector<int> q(cols);
  for (int64_t r = 0; r < rows; ++r) {
    const float* w = m.values.data() + r * cols;
    float amax = 0.f;
    for (int64_t i = 0; i < cols; ++i) amax = std::max(amax, std::fabs(w[i]));
    const float s = std::max(amax / static_cast<float>(qmax), 1e-8f);
    for (int64_t i = 0; i < cols; ++i)
      q[i] = std::clamp(static_cast<int>(std::lrintf(w[i] / s)), -qmax - 1, qmax);
    pack_row(q, type, packed.values);
    scales.values.push_back(s);
  }
  return {std::move(packed), std::move(scales)};
}

void write_container(const std::filesystem::path& dir, const nlohmann::json& config,
                     const TensorList& tensors, const ContainerSpec& spec) {
  std::filesystem::create_directories(dir);
  write_file_atomically(dir / "config.json", config.dump(2));
  TensorList stored;
  for (const HostTensor& t : tensors) {
    const uint32_t type = container_type_of(t.name, spec);
    if (type == 0 || t.shape.size() != 2) {
      stored.push_back(t);
      continue;
    }
    auto [packed, scales] = quantize_rows(t, type);
    stored.push_back(std::move(packed));
    stored.push_back(std::move(scales));
  }
  Parts parts = split(std::move(stored));
  constexpr uint64_t kExpertAlignment = 4096;

  if (spec.layout == ContainerLayout::aligned_experts) {
    std::vector<Placed> placed;
    uint64_t end = 0, gap = 1;
    for (HostTensor& t : parts.resident) {  // odd gaps between resident tensors
      const uint64_t bytes = stored_bytes(t);
      placed.push_back({std::move(t), end + gap});
      end += gap + bytes;
      gap = gap % 13 + 3;
    }
    for (auto& [layer, experts] : parts.experts)
      for (auto& [e, pieces] : experts) {
        // gate, gate.qs, up, up.qs, down, down.qs: one extent.
        std::stable_sort(pieces.begin(), pieces.end(),
                         [](const HostTensor& a, const HostTensor& b) {
                           auto rank = [](const HostTensor& t) {
                             return t.name.find("gate_proj") != std::string::npos ? 0
                                    : t.name.find("up_proj") != std::string::npos ? 1
                                                                                  : 2;
                           };
                           return rank(a) < rank(b);
                         });
        end = align_up(end, kExpertAlignment);
        for (HostTensor& t : pieces) {
          const uint64_t bytes = stored_bytes(t);
          placed.push_back({std::move(t), end});
          end += bytes;
        }
      }
    write_file(dir / "model.safetensors", std::move(placed), 4096, spec);
    return;
  }

  // Seed layout: shard 0 holds the resident tensors; the MoE layers' experts
  // are spread over the other shards, each expert's matrices adjacent and
  // 4096-aligned, then all scales of the layer.
  const int shards = std::max(spec.shards, 2);
  std::vector<std::vector<Placed>> files(shards);
  std::vector<uint64_t> ends(shards, 0);
  for (HostTensor& t : parts.resident) {
    const uint64_t bytes = stored_bytes(t);
    files[0].push_back({std::move(t), ends[0]});
    ends[0] += bytes;
  }
  int next = 1;
  for (auto& [layer, experts] : parts.experts) {
    const int f = next;
    next = next % (shards - 1) + 1;
    std::vector<HostTensor> scales;
    for (auto& [e, pieces] : experts) {
      ends[f] = align_up(ends[f], kExpertAlignment);
      for (HostTensor& t : pieces) {
        if (is_scales(t)) {
          scales.push_back(std::move(t));
          continue;
        }
        const uint64_t bytes = stored_bytes(t);
        files[f].push_back({std::move(t), ends[f]});
        ends[f] += bytes;
      }
    }
    for (HostTensor& t : scales) {
      const uint64_t bytes = stored_bytes(t);
      files[f].push_back({std::move(t), ends[f]});
      ends[f] += bytes;
    }
  }
  nlohmann::ordered_json weight_map = nlohmann::ordered_json::object();
  uint64_t total = 0;
  for (int i = 0; i < shards; ++i) {
    const std::string name = fmt::format("model-{:05d}-of-{:05d}.safetensors", i + 1, shards);
    for (const Placed& p : files[i]) {
      weight_map[p.tensor.name] = name;
      total += stored_bytes(p.tensor);
    }
    write_file(dir / name, std::move(files[i]), kExpertAlignment, spec);
  }
  write_file_atomically(
      dir / "model.safetensors.index.json",
      nlohmann::ordered_json{{"metadata", {{"total_size", total}}}, {"weight_map", weight_map}}
          .dump(2));
}

}  // namespace glmrt::test
