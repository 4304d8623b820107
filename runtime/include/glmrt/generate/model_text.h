// The text side of a model: its tokenizer, chat template and the ids that end
// generation, from a model folder (tokenizer.json, tokenizer_config.json,
// chat_template.jinja, generation_config.json) or from a GGUF model's
// `tokenizer.*` keys. Every command that reads or writes text takes it from
// here, so `--model X.gguf` and `--model DIR` answer alike (docs/gguf.md).
#pragma once

#include <glmrt/model_files/model_config.h>
#include <glmrt/text/chat_template_choice.h>
#include <glmrt/text/model_chat_template.h>
#include <glmrt/text/tokenizer.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

namespace glmrt {

namespace gguf {
class Model;
}

class ModelText {
 public:
  /// `model`: a model folder, or a GGUF model (a .gguf file, the first shard
  /// of a split one, or a folder holding one). A GGUF's header is read here;
  /// nothing is built until asked for, so a model whose tokenizer cannot be
  /// built still runs on token ids.
  static ModelText open(const std::filesystem::path& model);

  ModelText(ModelText&&) noexcept;
  ModelText& operator=(ModelText&&) noexcept;
  ~ModelText();

  /// The tokenizer, built by this call: the folder's tokenizer.json, or the
  /// GGUF's `tokenizer.ggml.*` keys (with BOS added as add_bos_token says).
  /// A GGUF without a tokenizer, or with one glmrt refuses, is an error
  /// naming the file and the missing or bad key.
  text::Tokenizer tokenizer() const;
  /// Throws as tokenizer() does for a GGUF without a tokenizer or with one
  /// of a kind, pre-tokenizer or special id glmrt refuses, building nothing:
  /// a check before a model loads that keeps the tokenizer's memory out of
  /// what the memory plan measures then.
  void require_tokenizer() const;

  /// The chat template: the folder's (ModelChatTemplate::for_model), or the
  /// GGUF's `tokenizer.chat_template` with its bos/eos/unk/pad tokens. Without
  /// one, or for ChatTemplateChoice::builtin, the built-in renderer of the
  /// model's type; another type is an error naming the file.
  text::ModelChatTemplate chat_template(text::ChatTemplateChoice choice) const;

  /// The ids that end an answer, sorted: a folder's as stop_token_ids gives
  /// them; a GGUF's are `config`'s eos ids with the end-of-generation ids of
  /// its vocabulary (gguf::end_of_generation_token_ids), as llama.cpp stops.
  std::vector<int32_t> stop_ids(const ModelConfig& config) const;

  bool is_gguf() const { return gguf_ != nullptr; }

 private:
  explicit ModelText(std::filesystem::path path);

  std::filesystem::path path_;
  std::unique_ptr<gguf::Model> gguf_;  // null for a model folder
};

}  // namespace glmrt
