// One GGUF file's header: magic, version, counts, metadata, tensor infos.
// Layout (little-endian): "GGUF", u32 version, u64 tensor count, u64 key
// count, the key/value pairs, the tensor infos (name, u32 n_dims, i64 dims,
// u32 ggml type, u64 offset into the data section), then the data section
// at the next multiple of general.alignment.
#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/model_files/file_io.h>
#include <glmrt/model_files/gguf.h>
#include <glmrt/plugin/ggml_types.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <unordered_set>

#include "gguf_byte_reader.h"

namespace glmrt::gguf {

namespace {

using std::filesystem::path;

// The fewest bytes one tensor info takes (an empty name, one dimension) and
// one key/value pair (an empty key, a one-byte value): counts are bounded by
// what the rest of the file can hold before anything is allocated for them.
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;
constexpr uint64_t kMinPairBytes = 8 + 4 + 1;
constexpr uint64_t kMinNestedArrayBytes = 4 + 8;
// Real files nest no arrays at all; this bounds the memory nested ones take.
constexpr uint64_t kMaxNestedArrays = 1 << 16;

// Reads the metadata pairs, keeping count of the bytes and nested arrays
// they take.
class MetadataParser {
 public:
  explicit MetadataParser(ByteReader& reader) : r_(reader), start_(reader.position()) {}

  Value value(ValueType type, const std::string& what, int depth) {
    Value out;
    out.type = type;
    if (type == ValueType::string) {
      out.text = r_.string(what, allowance());
    } else if (type == ValueType::array) {
      out.array = array(what, depth + 1);
    } else {
      std::array<std::byte, 8> bytes{};
      r_.read(std::span(bytes).first(value_type_bytes(type)), what);
      std::memcpy(&out.bits, bytes.data(), sizeof out.bits);
      if (type == ValueType::boolean && out.bits > 1)
        fail("{}: {} is a bool stored as byte {}, expected 0 or 1", r_.file(), what, out.bits);
    }
    return out;
  }

  ValueType type(const std::string& what) {
    const uint32_t id = r_.u32(what);
    if (id >= kValueTypeCount)
      fail("{}: {} has value type {}, not a GGUF type (0..{})", r_.file(), what, id,
           kValueTypeCount - 1);
    return static_cast<ValueType>(id);
  }

 private:
  // Bytes a string or array may still take: the rest of the file, and the
  // rest of the metadata bound.
  uint64_t allowance() const {
    const uint64_t used = r_.position() - start_;
    const uint64_t left = used >= kMaxMetadataBytes ? 0 : kMaxMetadataBytes - used;
    return std::min(left, r_.remaining());
  }

  void require_count(uint64_t count, uint64_t min_bytes, const std::string& what,
                     std::string_view element) {
    const uint64_t room = allowance() / min_bytes;
    if (count > room) {
      const bool file_bound = r_.remaining() / min_bytes <= room;
      fail("{}: {} claims {} {} elements, but {} hold at most {} (corrupt count?)", r_.file(), what,
           count, element,
           file_bound ? fmt::format("the {} bytes left in the file", r_.remaining())
                      : fmt::format("the {} MiB metadata limit", kMaxMetadataBytes >> 20),
           room);
    }
  }

  Array array(const std::string& what, int depth) {
    if (depth > kMaxArrayDepth)
      fail("{}: {} nests arrays more than {} deep", r_.file(), what, kMaxArrayDepth);
    const ValueType element = type(what + " (its element type)");
    const uint64_t count = r_.u64(what + " (its element count)");
    if (const size_t each = value_type_bytes(element)) {
      require_count(count, each, what, value_type_name(element));
      std::vector<std::byte> packed(count * each);
      r_.read(packed, what);
      if (element == ValueType::boolean) {
        const auto bad = std::find_if(packed.begin(), packed.end(),
                                      [](std::byte b) { return std::to_integer<int>(b) > 1; });
        if (bad != packed.end())
          fail("{}: {}, element {}, is a bool stored as byte {}, expected 0 or 1", r_.file(), what,
               bad - packed.begin(), std::to_integer<int>(*bad));
      }
      return Array::of_packed(element, count, std::move(packed));
    }
    Array out(element);
    if (element == ValueType::string) {
      require_count(count, 8, what, "string");
      for (uint64_t i = 0; i < count; ++i)
        out.append_string(r_.string(fmt::format("{}, element {},", what, i), allowance()));
      return out;
    }
    require_count(count, kMinNestedArrayBytes, what, "array");
    if (count > kMaxNestedArrays - nested_arrays_)
      fail("{}: {} holds more than {} nested arrays", r_.file(), what, kMaxNestedArrays);
    nested_arrays_ += count;
    for (uint64_t i = 0; i < count; ++i)
      out.append_array(array(fmt::format("{}, element {},", what, i), depth + 1));
    return out;
  }

  ByteReader& r_;
  uint64_t start_;
  uint64_t nested_arrays_ = 0;
};

void check_magic_and_version(ByteReader& r, FileHeader& header) {
  const path& file = header.file;
  if (header.file_size < 8)
    fail("{} is {} bytes long, too short for a GGUF file (which starts with 'GGUF' and a version)",
         file, header.file_size);
  std::array<std::byte, 4> magic{};
  r.read(magic, "the magic bytes");
  if (std::memcmp(magic.data(), "GGUF", 4) != 0) {
    std::string_view text(reinterpret_cast<const char*>(magic.data()), magic.size());
    fail("{} is not a GGUF file: it starts with '{}', expected 'GGUF'", file, printable(text));
  }
  const uint32_t version = r.u32("the version");
  header.version = version;
  if (version != 0 && (version & 0xffff) == 0) {
    fail(
        "{} is a big-endian GGUF file (its version reads {} the other way round); glmrt reads "
        "little-endian GGUF files only",
        file, __builtin_bswap32(version));
  }
  if (version == 1) {
    fail(
        "{} is GGUF version 1 (llama.cpp's format before August 2023), which glmrt does not "
        "read; convert the model again with a current llama.cpp (versions 2 and 3 are read)",
        file);
  }
  if (version < kMinVersion || version > kMaxVersion)
    fail("{} is GGUF version {}; glmrt reads versions {} and {}", file, version, kMinVersion,
         kMaxVersion);
}

void read_metadata(ByteReader& r, FileHeader& header, uint64_t count) {
  MetadataParser parser(r);
  for (uint64_t i = 0; i < count; ++i) {
    std::string key = r.string(fmt::format("the key of metadata pair #{}", i), kMaxKeyBytes);
    const std::string what = fmt::format("metadata key '{}'", printable(key, 200));
    const ValueType type = parser.type(what);
    header.metadata.add(std::move(key), parser.value(type, what, 0));
  }
  if (header.metadata.contains("general.alignment")) {
    const auto value = header.metadata.get<uint32_t>("general.alignment");
    if (value == 0 || (value & (value - 1)) != 0)
      fail("{}: general.alignment is {}, expected a power of two (the default is {})", header.file,
           value, kDefaultAlignment);
    header.alignment = value;
  }
}

TensorInfo read_tensor_info(ByteReader& r, const path& file, uint64_t index) {
  TensorInfo t;
  t.name = r.string(fmt::format("the name of tensor #{}", index), kMaxTensorNameBytes);
  const std::string what = fmt::format("tensor '{}'", printable(t.name));
  const uint32_t n_dims = r.u32(what + " (its dimension count)");
  if (n_dims < 1 || n_dims > kMaxDims)
    fail("{}: {} has {} dimensions, expected 1 to {}", file, what, n_dims, kMaxDims);
  int64_t numel = 1;
  for (uint32_t d = 0; d < n_dims; ++d) {
    const auto dim = static_cast<int64_t>(r.u64(what + " (its dimensions)"));
    if (dim < 0) fail("{}: {} has dimension {} = {}, expected >= 0", file, what, d, dim);
    t.dims.push_back(dim);
    if (__builtin_mul_overflow(numel, dim, &numel))
      fail("{}: {} has dimensions {} whose element count overflows 64 bits", file, what,
           fmt::join(t.dims, " x "));
  }
  t.type = r.u32(what + " (its type)");
  const plugin::GgmlTypeTraits traits = plugin::ggml_type_traits(t.type);
  if (traits.name == nullptr)
    fail("{}: {} has ggml type id {}, not a type glmrt knows", file, what, t.type);
  if (t.dims[0] % traits.block_values != 0)
    fail("{}: {} is {} with rows of {} values, not a whole number of its {}-value blocks", file,
         what, traits.name, t.dims[0], traits.block_values);
  const int64_t row_bytes = plugin::ggml_row_bytes(t.type, t.dims[0]);
  if (row_bytes < 0)
    fail("{}: {}'s row of {} values overflows 64-bit byte counts", file, what, t.dims[0]);
  // Not bounded by the element count: a zero-length row makes that count 0 whatever the rest.
  int64_t rows = 1;
  for (size_t d = 1; d < t.dims.size(); ++d)
    if (__builtin_mul_overflow(rows, t.dims[d], &rows))
      fail("{}: {} has dimensions {} whose row count overflows 64 bits", file, what,
           fmt::join(t.dims, " x "));
  int64_t bytes = 0;
  if (__builtin_mul_overflow(row_bytes, rows, &bytes))
    fail("{}: {}'s byte size overflows 64 bits", file, what);
  t.byte_size = static_cast<uint64_t>(bytes);
  t.offset = r.u64(what + " (its offset)");
  return t;
}

void place_tensors(FileHeader& header) {
  const path& file = header.file;
  const uint64_t data_size =
      header.file_size > header.data_offset ? header.file_size - header.data_offset : 0;
  for (TensorInfo& t : header.tensors) {
    const std::string name = printable(t.name);
    if (t.offset % header.alignment != 0)
      fail("{}: tensor '{}' starts at data offset {}, not a multiple of the alignment {}", file,
           name, t.offset, header.alignment);
    if (t.offset > data_size || t.byte_size > data_size - t.offset)
      fail(
          "{}: tensor '{}' needs {} bytes from data offset {}, but the file holds {} bytes of "
          "data (truncated?)",
          file, name, t.byte_size, t.offset, data_size);
    t.offset += header.data_offset;
  }
  std::vector<const TensorInfo*> by_offset;
  for (const TensorInfo& t : header.tensors)
    if (t.byte_size > 0) by_offset.push_back(&t);
  std::sort(by_offset.begin(), by_offset.end(),
            [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const TensorInfo& prev = *by_offset[i - 1];
    const TensorInfo& cur = *by_offset[i];
    if (cur.offset < prev.offset + prev.byte_size)
      fail("{}: tensors '{}' (file bytes {}..{}) and '{}' (file bytes {}..{}) overlap", file,
           printable(prev.name), prev.offset, prev.offset + prev.byte_size, printable(cur.name),
           cur.offset, cur.offset + cur.byte_size);
  }
}

}  // namespace

FileHeader read_file_header(int fd, const path& file, int file_index) {
  FileHeader header;
  header.file = file;
  header.metadata = Metadata(file);
  header.file_size = model_files::file_size(fd, file);
  ByteReader r(fd, file, header.file_size);
  check_magic_and_version(r, header);
  const uint64_t tensor_count = r.u64("the tensor count");
  const uint64_t pair_count = r.u64("the metadata key count");
  if (pair_count > kMaxKeys || pair_count > r.remaining() / kMinPairBytes)
    fail(
        "{} claims {} metadata keys; the {} bytes left in the file hold at most {} (and glmrt "
        "reads at most {})",
        file, pair_count, r.remaining(), r.remaining() / kMinPairBytes, kMaxKeys);
  if (tensor_count > kMaxTensors || tensor_count > r.remaining() / kMinTensorInfoBytes)
    fail(
        "{} claims {} tensors; the {} bytes left in the file hold at most {} tensor infos (and "
        "glmrt reads at most {})",
        file, tensor_count, r.remaining(), r.remaining() / kMinTensorInfoBytes, kMaxTensors);
  read_metadata(r, header, pair_count);
  std::unordered_set<std::string_view> names;
  for (uint64_t i = 0; i < tensor_count; ++i) {
    header.tensors.push_back(read_tensor_info(r, file, i));
    header.tensors.back().file_index = file_index;
  }
  for (const TensorInfo& t : header.tensors)
    if (!names.insert(t.name).second)
      fail("{}: tensor '{}' appears twice", file, printable(t.name));
  const uint64_t end = r.position();
  const uint64_t padding = (header.alignment - end % header.alignment) % header.alignment;
  header.data_offset = end + padding;  // end <= file size: no overflow
  place_tensors(header);
  return header;
}

}  // namespace glmrt::gguf
