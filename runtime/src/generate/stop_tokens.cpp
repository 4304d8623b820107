#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/json_nesting.h>
#include <glmrt/base/printable.h>
#include <glmrt/generate/stop_tokens.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>

namespace glmrt {
namespace {

// Absent is fine; present but unreadable (a folder, a FIFO, too large) is an error.
std::optional<nlohmann::json> read_json_if_present(const std::filesystem::path& file,
                                                   const InputKind& kind) {
  const std::optional<std::string> read = read_input_file_if_present(file, kind);
  if (!read) return std::nullopt;
  const std::string& text = *read;
  require_json_nesting_within(text, file.string());
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    fail("{}: not valid JSON ({})", file, printable(e.what()));
  }
}

// A token id of a model of `vocab_size` tokens: an id past the vocabulary
// names a token the model can never produce (a stop that never stops).
int32_t as_token_id(const nlohmann::json& value, const std::filesystem::path& file, const char* key,
                    int vocab_size) {
  // An unsigned beyond int64 reads as negative: refused either way.
  if (!value.is_number_integer())
    fail("{}: key `{}` holds {} (expected a token id: a non-negative integer, or a list of them)",
         file, key, printable(value.dump(), 64));
  const int64_t id = value.get<int64_t>();
  if (id < 0 || id >= vocab_size)
    fail(
        "{}: key `{}` holds {}, not a token id of the vocabulary (config.json's vocab_size {}: "
        "ids 0 to {})",
        file, key, value.dump(), vocab_size, vocab_size - 1);
  return static_cast<int32_t>(id);
}

void add_generation_config_ids(const std::filesystem::path& model_dir, int vocab_size,
                               std::vector<int32_t>& ids) {
  const auto file = model_dir / "generation_config.json";
  const auto json = read_json_if_present(file, input_kinds::generation_config);
  if (!json || !json->is_object()) return;
  // Not used for stopping, but held to the same vocabulary as config.json's.
  for (const char* key : {"bos_token_id", "pad_token_id"})
    if (const auto id = json->find(key); id != json->end() && !id->is_null())
      as_token_id(*id, file, key, vocab_size);
  const auto eos = json->find("eos_token_id");
  if (eos == json->end() || eos->is_null()) return;
  if (!eos->is_array()) {
    ids.push_back(as_token_id(*eos, file, "eos_token_id", vocab_size));
    return;
  }
  for (const auto& id : *eos) ids.push_back(as_token_id(id, file, "eos_token_id", vocab_size));
}

void add_tokenizer_config_id(const std::filesystem::path& model_dir, std::vector<int32_t>& ids) {
  const auto file = model_dir / "tokenizer_config.json";
  const auto json = read_json_if_present(file, input_kinds::tokenizer_config);
  if (!json || !json->is_object()) return;
  const auto eos = json->find("eos_token");
  if (eos == json->end() || eos->is_null()) return;
  std::string content;
  if (eos->is_string()) {
    content = eos->get<std::string>();
  } else if (eos->is_object() && eos->contains("content") && (*eos)["content"].is_string()) {
    content = (*eos)["content"].get<std::string>();
  } else {
    fail("{}: key `eos_token` holds {} (expected a string or an object with a string `content`)",
         file, eos->dump());
  }
  // Without an added_tokens_decoder entry the id lives only in tokenizer.json;
  // config.json's eos ids cover that case for every supported checkpoint.
  const auto decoder = json->find("added_tokens_decoder");
  if (decoder == json->end() || !decoder->is_object()) return;
  for (const auto& [id_text, token] : decoder->items()) {
    if (!token.is_object() || token.value("content", std::string()) != content) continue;
    size_t used = 0;
    long long id = -1;
    try {
      id = std::stoll(id_text, &used);
    } catch (const std::exception&) {
    }
    if (used != id_text.size() || id < 0 || id > std::numeric_limits<int32_t>::max())
      fail("{}: key `added_tokens_decoder.{}` is not a token id", file, id_text);
    ids.push_back(static_cast<int32_t>(id));
  }
}

}  // namespace

std::vector<int32_t> stop_token_ids(const ModelConfig& config,
                                    const std::filesystem::path& model_dir) {
  std::vector<int32_t> ids(config.eos_token_ids.begin(), config.eos_token_ids.end());
  // A GGUF file carries its end-of-generation ids in its metadata (config's).
  std::error_code ec;
  if (std::filesystem::is_directory(model_dir, ec)) {
    add_generation_config_ids(model_dir, config.vocab_size, ids);
    add_tokenizer_config_id(model_dir, ids);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::vector<int32_t> with_role_tokens(std::vector<int32_t> stops,
                                      const text::Tokenizer& tokenizer) {
  for (const char* role : {"<|system|>", "<|user|>", "<|assistant|>", "<|observation|>"})
    if (const auto id = tokenizer.token_to_id(role); id && tokenizer.is_special(*id))
      stops.push_back(static_cast<int32_t>(*id));
  std::sort(stops.begin(), stops.end());
  stops.erase(std::unique(stops.begin(), stops.end()), stops.end());
  return stops;
}

}  // namespace glmrt
