// The checksum of the source bytes one output file of a conversion is made
// of: a later run keeps a finished file only when its sources still hash to
// the value recorded when it was written, so a source rewritten in place (same
// size, same time) is converted again. The bytes fall in three streams,
// each hashed (XXH3-64) where its bytes pass during a conversion: the rows of
// the matrices converted (on the read-ahead thread), the tensors copied as
// they are, and the FP8 block scales; the checksum combines the three.
#pragma once

#include <glmrt/convert/conversion_plan.h>
#include <glmrt/model_files/safetensors.h>
#include <xxhash.h>

#include <cstdint>
#include <functional>
#include <span>

namespace glmrt {

class SourceChecksum {
 public:
  SourceChecksum();
  ~SourceChecksum();
  SourceChecksum(const SourceChecksum&) = delete;
  SourceChecksum& operator=(const SourceChecksum&) = delete;

  /// The three streams, each fed in order (each from one thread at a time).
  void add_matrix_rows(std::span<const std::byte> bytes);
  void add_copied(std::span<const std::byte> bytes);
  void add_block_scales(std::span<const std::byte> bytes);
  uint64_t digest() const;

 private:
  XXH3_state_t* matrix_rows_;
  XXH3_state_t* copied_;
  XXH3_state_t* block_scales_;
};

/// Reads the sources of one output file's `parts` from `dir` and returns the
/// checksum its conversion computed; `progress` gets the bytes of each read.
uint64_t source_checksum(std::span<const ConvertedPart> parts, const TensorDirectory& dir,
                         const std::function<void(uint64_t)>& progress);

}  // namespace glmrt
