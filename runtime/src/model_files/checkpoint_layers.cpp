#include <glmrt/base/error.h>
#include <glmrt/base/warning.h>
#include <glmrt/model_files/checkpoint_layers.h>

#include <algorithm>
#include <charconv>
#include <optional>
#include <set>
#include <string_view>

namespace glmrt {
namespace {

constexpr std::string_view kLayerPrefix = "model.layers.";
constexpr std::string_view kMtpMarker = "eh_proj.weight";

/// N and the rest of a `model.layers.N.rest` name.
std::optional<std::pair<int, std::string_view>> split_layer_name(std::string_view name) {
  if (!name.starts_with(kLayerPrefix)) return std::nullopt;
  name.remove_prefix(kLayerPrefix.size());
  int layer = -1;
  const auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), layer);
  if (ec != std::errc{} || end == name.data() || layer < 0 || end == name.data() + name.size() ||
      *end != '.')
    return std::nullopt;
  return std::pair{layer, std::string_view(end + 1, name.data() + name.size() - end - 1)};
}

std::string layer_range(int count) {
  if (count == 0) return "no model.layers.* tensors";
  if (count == 1) return "model.layers.0";
  return fmt::format("model.layers.0 to model.layers.{}", count - 1);
}

}  // namespace

CheckpointLayers CheckpointLayers::of(const TensorDirectory& tensors) {
  std::set<int> mtp;
  for (const TensorInfo& t : tensors.tensors())
    if (auto split = split_layer_name(t.name); split && split->second == kMtpMarker)
      mtp.insert(split->first);
  CheckpointLayers layers;
  layers.mtp_layers.assign(mtp.begin(), mtp.end());
  for (const TensorInfo& t : tensors.tensors())
    if (auto split = split_layer_name(t.name); split && !mtp.contains(split->first))
      layers.decoder_layers = std::max(layers.decoder_layers, split->first + 1);
  return layers;
}

bool CheckpointLayers::has_mtp_layer(int layer) const {
  return std::binary_search(mtp_layers.begin(), mtp_layers.end(), layer);
}

void check_layer_count(const ModelConfig& c, const CheckpointLayers& checkpoint) {
  const int configured = c.num_hidden_layers, found = checkpoint.decoder_layers;
  const auto model_dir = c.file.parent_path();
  if (configured > found) {
    const std::string mtp_note =
        configured == found + 1 && checkpoint.has_mtp_layer(found)
            ? fmt::format(
                  "; model.layers.{} is the multi-token-prediction layer (it has {}), which would "
                  "run as a decoder layer",
                  found, kMtpMarker)
            : "";
    fail("{}: key 'num_hidden_layers' is {}, but the checkpoint in {} has {} decoder layers ({}){}",
         c.file, configured, model_dir, found, layer_range(found), mtp_note);
  }
  if (configured < found) {
    const std::string unused =
        configured + 1 == found ? fmt::format("model.layers.{} would go unused", configured)
                                : fmt::format("model.layers.{} to model.layers.{} would go unused",
                                              configured, found - 1);
    fail(
        "{}: key 'num_hidden_layers' is {}, but the checkpoint in {} has {} decoder layers ({}): "
        "{}",
        c.file, configured, model_dir, found, layer_range(found), unused);
  }
  if (c.num_nextn_predict_layers > 0 && !checkpoint.has_mtp_layer(configured)) {
    note(
        "{}: num_nextn_predict_layers is {}, but the checkpoint in {} has no "
        "multi-token-prediction "
        "layer (no model.layers.{}.{}); running without it (converted checkpoints may drop it)",
        c.file, c.num_nextn_predict_layers, model_dir, configured, kMtpMarker);
  }
}

}  // namespace glmrt
