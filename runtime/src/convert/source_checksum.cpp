#include "source_checksum.h"

#include <algorithm>
#include <array>
#include <functional>
#include <vector>

#include <fmt/format.h>

#include <glmrt/model_files/file_io.h>

namespace glmrt {
namespace {

constexpr uint64_t kReadBytes = 8u << 20;

// Bytes [0, t.byte_size) of `t`, a read of at most kReadBytes at a time.
void read_in_pieces(const TensorDirectory& dir, const TensorInfo& t,
                    const std::function<void(std::span<const std::byte>)>& use) {
  std::vector<std::byte> buffer;
  for (uint64_t at = 0; at < t.byte_size; at += kReadBytes) {
    buffer.resize(std::min(kReadBytes, t.byte_size - at));
    model_files::pread_exact(dir.fd(t.file_index), t.offset + at, buffer,
                             dir.files().at(t.file_index), fmt::format("tensor '{}'", t.name));
    use(buffer);
  }
}

}  // namespace

SourceChecksum::SourceChecksum()
    : matrix_rows_(XXH3_createState()),
      copied_(XXH3_createState()),
      block_scales_(XXH3_createState()) {
  for (XXH3_state_t* s : {matrix_rows_, copied_, block_scales_}) XXH3_64bits_reset(s);
}

SourceChecksum::~SourceChecksum() {
  for (XXH3_state_t* s : {matrix_rows_, copied_, block_scales_}) XXH3_freeState(s);
}

void SourceChecksum::add_matrix_rows(std::span<const std::byte> bytes) {
  XXH3_64bits_update(matrix_rows_, bytes.data(), bytes.size());
}

void SourceChecksum::add_copied(std::span<const std::byte> bytes) {
  XXH3_64bits_update(copied_, bytes.data(), bytes.size());
}

void SourceChecksum::add_block_scales(std::span<const std::byte> bytes) {
  XXH3_64bits_update(block_scales_, bytes.data(), bytes.size());
}

uint64_t SourceChecksum::digest() const {
  const std::array<uint64_t, 3> parts{XXH3_64bits_digest(matrix_rows_), XXH3_64bits_digest(copied_),
                                      XXH3_64bits_digest(block_scales_)};
  return XXH3_64bits(parts.data(), sizeof(parts));
}

uint64_t source_checksum(std::span<const ConvertedPart> parts, const TensorDirectory& dir,
                         const std::function<void(uint64_t)>& progress) {
  SourceChecksum sum;
  for (const ConvertedPart& p : parts) {
    if (p.kind == ConvertedPart::Kind::scales) continue;  // made from the values' source
    const bool copied = p.kind == ConvertedPart::Kind::copy;
    read_in_pieces(dir, *p.source, [&](std::span<const std::byte> bytes) {
      copied ? sum.add_copied(bytes) : sum.add_matrix_rows(bytes);
      progress(bytes.size());
    });
    if (p.block_scales)
      read_in_pieces(dir, *p.block_scales, [&](std::span<const std::byte> bytes) {
        sum.add_block_scales(bytes);
        progress(bytes.size());
      });
  }
  return sum.digest();
}

}  // namespace glmrt
