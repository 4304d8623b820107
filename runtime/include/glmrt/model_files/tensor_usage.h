// Which tensors of a checkpoint the model actually uses. A tensor nothing
// reads means the config and the checkpoint disagree (an MTP layer the config
// does not ask for, a renamed weight): the run goes on, with one warning that
// lists them.
#pragma once

#include <glmrt/model_files/safetensors.h>

#include <filesystem>
#include <string>
#include <vector>

namespace glmrt {

class TensorUsage {
 public:
  /// `tensors` must outlive this.
  explicit TensorUsage(const TensorDirectory& tensors);

  /// Marks `t` (a tensor of the directory) as used.
  void mark(const TensorInfo& t);
  /// Marks the tensor called `name`, when the directory has it.
  void mark(std::string_view name);

  /// Names of the tensors never marked, in the directory's order.
  std::vector<std::string> unused() const;

  /// Prints one warning naming the unused tensors (whole layers summarised
  /// as `model.layers.N.*`), or nothing when every tensor was used.
  void warn_unused(const std::filesystem::path& model_dir) const;

 private:
  const TensorDirectory& tensors_;
  std::vector<char> used_;  // per tensor, in tensors_.tensors() order
};

}  // namespace glmrt
