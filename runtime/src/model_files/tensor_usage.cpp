#include <glmrt/base/error.h>
#include <glmrt/base/warning.h>
#include <glmrt/model_files/tensor_usage.h>

#include <fmt/ranges.h>

#include <map>

namespace glmrt {
namespace {

constexpr size_t kNamesShown = 12;

// "model.layers.7." for a per-layer tensor, empty otherwise.
std::string layer_prefix(const std::string& name) {
  constexpr std::string_view kLayers = "model.layers.";
  if (!name.starts_with(kLayers)) return {};
  const size_t dot = name.find('.', kLayers.size());
  return dot == std::string::npos ? std::string() : name.substr(0, dot + 1);
}

}  // namespace

TensorUsage::TensorUsage(const TensorDirectory& tensors)
    : tensors_(tensors), used_(tensors.tensors().size(), 0) {}

void TensorUsage::mark(const TensorInfo& t) {
  const auto& all = tensors_.tensors();
  if (all.empty() || &t < all.data() || &t >= all.data() + all.size())
    fail("tensor '{}' is not one of this directory's tensors", t.name);
  used_[static_cast<size_t>(&t - all.data())] = 1;
}

void TensorUsage::mark(std::string_view name) {
  if (const TensorInfo* t = tensors_.find(name)) mark(*t);
}

std::vector<std::string> TensorUsage::unused() const {
  std::vector<std::string> names;
  const auto& all = tensors_.tensors();
  for (size_t i = 0; i < all.size(); ++i)
    if (!used_[i]) names.push_back(all[i].name);
  return names;
}

void TensorUsage::warn_unused(const std::filesystem::path& model_dir) const {
  const std::vector<std::string> names = unused();
  if (names.empty()) return;
  // A layer none of whose tensors is used is one entry, not dozens.
  std::map<std::string, std::pair<size_t, size_t>> per_layer;  // prefix -> (unused, all)
  for (const TensorInfo& t : tensors_.tensors())
    if (std::string prefix = layer_prefix(t.name); !prefix.empty()) ++per_layer[prefix].second;
  for (const std::string& name : names)
    if (std::string prefix = layer_prefix(name); !prefix.empty()) ++per_layer[prefix].first;
  std::vector<std::string> entries;
  std::string last_whole_layer;
  for (const std::string& name : names) {
    const std::string prefix = layer_prefix(name);
    const bool whole_layer = !prefix.empty() && per_layer[prefix].first == per_layer[prefix].second;
    if (!whole_layer) {
      entries.push_back(name);
    } else if (prefix != last_whole_layer) {
      entries.push_back(fmt::format("{}* ({} tensors)", prefix, per_layer[prefix].second));
      last_whole_layer = prefix;
    }
  }
  const size_t hidden = entries.size() > kNamesShown ? entries.size() - kNamesShown : 0;
  entries.resize(entries.size() - hidden);
  warn("{} tensor{} of the checkpoint in {} {} not used by this config.json: {}{}", names.size(),
       names.size() == 1 ? "" : "s", model_dir, names.size() == 1 ? "is" : "are",
       fmt::join(entries, ", "), hidden ? fmt::format(", and {} more", hidden) : std::string());
}

}  // namespace glmrt
