#include "text_tokens.h"

#include <glmrt/base/byte_size.h>
#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/memory.h>
#include <glmrt/memory/available_memory.h>
#include <glmrt/memory/memory_plan.h>
#include <glmrt/memory/run_settings.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/model_files/safetensors.h>
#include <glmrt/text/chunked_encoder.h>

#include <limits>

namespace glmrt::cli {
namespace {

// The bytes the text's ids may take: what the budget leaves above the
// plan's minimum (the expert cache sized from what is left shrinks to make
// room: the engine counts the process's memory, ids included, when it
// plans). Unlimited without a budget.
uint64_t room_for_ids(const Profile& profile, const std::filesystem::path& folder) {
  const TensorDirectory tensors = TensorDirectory::open(folder);
  const ModelConfig config = load_model_config(folder, tensors);
  const MemoryPlanInputs inputs{current_rss_bytes(), measure_available_memory(), uint64_t{0}};
  const MemoryPlan plan =
      plan_memory(profile, resolve_run_settings(profile, config), config, tensors, inputs);
  if (plan.budget == 0) return std::numeric_limits<uint64_t>::max();
  return plan.budget > plan.minimum() ? plan.budget - plan.minimum() : 0;
}

}  // namespace

std::vector<int32_t> read_text_tokens(std::string_view flag, const std::filesystem::path& file,
                                      const text::Tokenizer& tokenizer, const Profile& profile,
                                      const std::filesystem::path& folder) {
  const uint64_t room = room_for_ids(profile, folder);
  InputReader input = InputReader::open(file, input_kinds::text_to_tokenize);
  text::ChunkedEncoder encoder(tokenizer, true);
  std::vector<int32_t> tokens;
  std::vector<text::TokenId> ids;
  const auto keep = [&] {
    // Twice the ids: the vector may double as it grows.
    const uint64_t needed = 2 * sizeof(int32_t) * (tokens.size() + ids.size());
    if (needed > room)
      fail(
          "{} {}: its first {} tokens already need {} of memory, more than the {} the budget "
          "({}) leaves above what the run needs; give a shorter text or a larger "
          "memory.budget",
          flag, file.string(), tokens.size() + ids.size(), format_byte_size(needed),
          format_byte_size(room), profile.file.string());
    tokens.insert(tokens.end(), ids.begin(), ids.end());
    ids.clear();
  };
  for (std::string_view bytes; !(bytes = input.next(1 << 16)).empty();) {
    encoder.push(bytes, ids);
    if (!ids.empty()) keep();
  }
  encoder.finish(ids);
  keep();
  return tokens;
}

}  // namespace glmrt::cli
