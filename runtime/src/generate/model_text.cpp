#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/generate/model_text.h>
#include <glmrt/generate/stop_tokens.h>
#include <glmrt/model_files/gguf.h>
#include <glmrt/model_files/gguf_tokenizer.h>
#include <glmrt/model_files/safetensors.h>

#include <algorithm>
#include <utility>

namespace glmrt {

ModelText::ModelText(std::filesystem::path path) : path_(std::move(path)) {}
ModelText::ModelText(ModelText&&) noexcept = default;
ModelText& ModelText::operator=(ModelText&&) noexcept = default;
ModelText::~ModelText() = default;

ModelText ModelText::open(const std::filesystem::path& model) {
  ModelText text(model);
  if (is_gguf_model(model)) text.gguf_ = std::make_unique<gguf::Model>(gguf::Model::open(model));
  return text;
}

void ModelText::require_tokenizer() const {
  if (!gguf_) return;  // tokenizer.json is read by tokenizer(), naming it
  const gguf::Metadata& metadata = gguf_->metadata();
  if (!gguf::has_tokenizer(metadata))
    fail("{} has no tokenizer ({}): it runs on token ids only (--prompt-ids)",
         printable(metadata.file().string()),
         metadata.contains("tokenizer.ggml.model")
             ? "its metadata key 'tokenizer.ggml.model' says none"
             : "no metadata key 'tokenizer.ggml.model'");
  gguf::check_tokenizer_kind(metadata);
}

text::Tokenizer ModelText::tokenizer() const {
  if (!gguf_) return text::Tokenizer::from_file(path_ / "tokenizer.json");
  require_tokenizer();
  return gguf::tokenizer_from_gguf(gguf_->metadata());
}

text::ModelChatTemplate ModelText::chat_template(text::ChatTemplateChoice choice) const {
  if (!gguf_) return text::ModelChatTemplate::for_model(path_, choice);
  const gguf::Metadata& metadata = gguf_->metadata();
  if (choice == text::ChatTemplateChoice::model)
    if (auto shipped = gguf::chat_template_from_gguf(metadata)) return std::move(*shipped);
  return text::ModelChatTemplate::builtin(
      load_model_config(path_).model_type, printable(metadata.file().string()),
      choice == text::ChatTemplateChoice::builtin
          ? "the built-in template was asked for"
          : "the file has no metadata key 'tokenizer.chat_template'");
}

std::vector<int32_t> ModelText::stop_ids(const ModelConfig& config) const {
  if (!gguf_) return stop_token_ids(config, path_);
  std::vector<int32_t> ids = gguf::end_of_generation_token_ids(gguf_->metadata());
  for (const int32_t id : ids)
    if (id < 0 || id >= config.vocab_size)
      fail(
          "{}: end-of-generation token id {} (tokenizer.ggml.*_token_id) is not below the "
          "model's vocabulary size {}",
          printable(gguf_->metadata().file().string()), id, config.vocab_size);
  ids.insert(ids.end(), config.eos_token_ids.begin(), config.eos_token_ids.end());
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

}  // namespace glmrt
