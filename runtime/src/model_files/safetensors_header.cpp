#include "safetensors_header.h"

#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>

#include <glmrt/base/error.h>
#include <glmrt/base/json_nesting.h>
#include <glmrt/model_files/file_io.h>
#include "dtype_conversion.h"
#include "quant_format_stamp.h"

namespace glmrt::model_files {

namespace {

using nlohmann::json;
using std::filesystem::path;

constexpr std::string_view kMetadataKey = "__metadata__";

uint64_t read_header_length(int fd, const path& file, uint64_t size) {
  if (size < 8) {
    fail(
        "{} is {} bytes long, shorter than the 8-byte header length that starts every "
        "safetensors file",
        file, size);
  }
  std::array<std::byte, 8> bytes{};
  pread_exact(fd, 0, bytes, file, "the header length");
  uint64_t length = 0;
  for (int i = 7; i >= 0; --i) length = (length << 8) | std::to_integer<uint64_t>(bytes[i]);
  if (length > kMaxSafetensorsHeaderBytes) {
    fail("{}: header length {} exceeds the {}-byte limit (corrupt, or not a safetensors file)",
         file, length, kMaxSafetensorsHeaderBytes);
  }
  if (length > size - 8) {
    fail("{}: header length {} runs past the end of the {}-byte file", file, length, size);
  }
  return length;
}

// Builds the header's DOM like nlohmann's own parser, and on the way refuses
// duplicate top-level names (a JSON object would silently keep only the last
// one, hiding which bytes a name means) and headers of too many tensors. A
// parser callback would do the first, but nlohmann's callback parser rescans
// the whole parent object at every nested object's end, quadratic in the
// tensor count (80k dummy tensors took minutes).
class HeaderSax {
 public:
  HeaderSax(json& result, const path& file, std::size_t max_tensors)
      : dom_(result), file_(file), max_tensors_(max_tensors) {}

  bool null() { return dom_.null(); }
  bool boolean(bool value) { return dom_.boolean(value); }
  bool number_integer(json::number_integer_t value) { return dom_.number_integer(value); }
  bool number_unsigned(json::number_unsigned_t value) { return dom_.number_unsigned(value); }
  bool number_float(json::number_float_t value, const std::string& text) {
    return dom_.number_float(value, text);
  }
  bool string(std::string& value) { return dom_.string(value); }
  bool binary(json::binary_t& value) { return dom_.binary(value); }
  bool start_object(std::size_t size) {
    ++depth_;
    return dom_.start_object(size);
  }
  bool key(std::string& name) {
    if (depth_ == 1) {
      if (++entries_ > max_tensors_) {
        fail("{}: header declares more than {} tensors (corrupt, or not a checkpoint's header)",
             file_, max_tensors_);
      }
      if (!seen_.insert(name).second && duplicate_.empty()) duplicate_ = name;
    }
    return dom_.key(name);
  }
  bool end_object() {
    --depth_;
    return dom_.end_object();
  }
  bool start_array(std::size_t size) {
    ++depth_;
    return dom_.start_array(size);
  }
  bool end_array() {
    --depth_;
    return dom_.end_array();
  }
  template <typename Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& e) {
    return dom_.parse_error(position, token, e);
  }

  const std::string& duplicate() const { return duplicate_; }

 private:
  nlohmann::detail::json_sax_dom_parser<json> dom_;
  const path& file_;
  std::size_t max_tensors_;
  int depth_ = 0;
  std::size_t entries_ = 0;
  std::unordered_set<std::string> seen_;
  std::string duplicate_;
};

json parse_header_json(const std::string& text, const path& file, std::size_t max_tensors) {
  require_json_nesting_within(text, fmt::format("{}: header", file.string()));
  json header;
  HeaderSax sax(header, file, max_tensors);
  try {
    json::sax_parse(text, &sax);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for 1e400
    fail("{}: header is not valid JSON: {}", file, e.what());
  }
  if (!header.is_object()) {
    fail("{}: header must be a JSON object mapping tensor names to entries, found {}", file,
         header.type_name());
  }
  if (!sax.duplicate().empty()) {
    fail("{}: tensor '{}' appears twice in the header", file, sax.duplicate());
  }
  return header;
}

const json& require_field(const json& entry, std::string_view field, const path& file,
                          const std::string& name) {
  const auto it = entry.find(field);
  if (it == entry.end()) fail("{}: tensor '{}' has no '{}' field", file, name, field);
  return *it;
}

DType read_dtype(const json& entry, const path& file, const std::string& name) {
  const json& value = require_field(entry, "dtype", file, name);
  if (!value.is_string()) {
    fail("{}: tensor '{}': dtype must be a string, found {}", file, name, value.dump());
  }
  const auto dtype = parse_dtype(value.get<std::string>());
  if (!dtype) {
    fail("{}: tensor '{}' has unknown dtype '{}' (known: {})", file, name, value.get<std::string>(),
         known_dtype_names());
  }
  return *dtype;
}

std::vector<int64_t> read_shape(const json& entry, const path& file, const std::string& name) {
  const json& value = require_field(entry, "shape", file, name);
  if (!value.is_array()) {
    fail("{}: tensor '{}': shape must be an array of non-negative integers, found {}", file, name,
         value.dump());
  }
  std::vector<int64_t> shape;
  for (const json& dim : value) {
    const bool valid = dim.is_number_unsigned() &&
                       dim.get<uint64_t>() <= uint64_t(std::numeric_limits<int64_t>::max());
    if (!valid) {
      fail("{}: tensor '{}': shape {} has dimension {}, expected a non-negative integer", file,
           name, value.dump(), dim.dump());
    }
    shape.push_back(dim.get<int64_t>());
  }
  return shape;
}

std::pair<uint64_t, uint64_t> read_offsets(const json& entry, const path& file,
                                           const std::string& name) {
  const json& value = require_field(entry, "data_offsets", file, name);
  const bool valid = value.is_array() && value.size() == 2 && value[0].is_number_unsigned() &&
                     value[1].is_number_unsigned();
  if (!valid) {
    fail("{}: tensor '{}': data_offsets must be [begin, end] with non-negative integers, found {}",
         file, name, value.dump());
  }
  const uint64_t begin = value[0].get<uint64_t>();
  const uint64_t end = value[1].get<uint64_t>();
  if (begin > end) {
    fail("{}: tensor '{}': data_offsets begin {} is after end {}", file, name, begin, end);
  }
  return {begin, end};
}

// shape x dtype size, refusing products that overflow 64 bits.
uint64_t expected_byte_size(const std::vector<int64_t>& shape, DType dtype, const path& file,
                            const std::string& name) {
  uint64_t bytes = dtype_size(dtype);
  for (int64_t dim : shape) {
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(dim), &bytes)) {
      fail("{}: tensor '{}': shape {} x {} overflows 64-bit byte counts", file, name,
           fmt::join(shape, "x"), dtype_name(dtype));
    }
  }
  return bytes;
}

void check_no_overlap(std::vector<TensorInfo>& tensors, const path& file, uint64_t data_start) {
  std::vector<const TensorInfo*> by_offset;
  for (const auto& t : tensors) {
    if (t.byte_size > 0) by_offset.push_back(&t);
  }
  std::sort(by_offset.begin(), by_offset.end(),
            [](const TensorInfo* a, const TensorInfo* b) { return a->offset < b->offset; });
  for (size_t i = 1; i < by_offset.size(); ++i) {
    const TensorInfo& prev = *by_offset[i - 1];
    const TensorInfo& cur = *by_offset[i];
    if (cur.offset < prev.offset + prev.byte_size) {
      fail("{}: tensors '{}' (data bytes {}..{}) and '{}' (data bytes {}..{}) overlap", file,
           prev.name, prev.offset - data_start, prev.offset - data_start + prev.byte_size, cur.name,
           cur.offset - data_start, cur.offset - data_start + cur.byte_size);
    }
  }
}

}  // namespace

std::vector<TensorInfo> read_safetensors_header(int fd, const path& file, int file_index) {
  const uint64_t size = file_size(fd, file);
  const uint64_t header_length = read_header_length(fd, file, size);
  std::string text(header_length, '\0');
  pread_exact(fd, 8, std::as_writable_bytes(std::span(text)), file, "the header");
  return parse_safetensors_header(text, size, file, file_index);
}

std::vector<TensorInfo> parse_safetensors_header(const std::string& text, uint64_t size,
                                                 const path& file, int file_index,
                                                 std::size_t max_tensors) {
  const json header = parse_header_json(text, file, max_tensors);
  const uint64_t header_length = text.size();
  if (8 + header_length > size)
    fail("{}: a header of {} bytes does not fit a file of {} bytes", file, header_length, size);
  const uint64_t data_start = 8 + header_length;
  const uint64_t data_size = size - data_start;
  std::vector<TensorInfo> tensors;
  const json* metadata = nullptr;
  for (const auto& [name, entry] : header.items()) {
    if (name == kMetadataKey) {
      if (!entry.is_object()) {
        fail("{}: '{}' must be a JSON object, found {}", file, kMetadataKey, entry.type_name());
      }
      metadata = &entry;
      continue;
    }
    if (!entry.is_object()) {
      fail("{}: tensor '{}': entry must be an object with dtype, shape and data_offsets, found {}",
           file, name, entry.dump());
    }
    TensorInfo t;
    t.name = name;
    t.dtype = read_dtype(entry, file, name);
    t.shape = read_shape(entry, file, name);
    const auto [begin, end] = read_offsets(entry, file, name);
    if (end > data_size) {
      fail(
          "{}: tensor '{}' needs data bytes {}..{} but the data section holds only {} bytes "
          "(file truncated?)",
          file, name, begin, end, data_size);
    }
    const uint64_t expected = expected_byte_size(t.shape, t.dtype, file, name);
    if (end - begin != expected) {
      fail("{}: tensor '{}' spans {} bytes but shape [{}] of {} needs {} bytes", file, name,
           end - begin, fmt::join(t.shape, ", "), dtype_name(t.dtype), expected);
    }
    t.file_index = file_index;
    t.offset = data_start + begin;
    t.byte_size = end - begin;
    tensors.push_back(std::move(t));
  }
  check_no_overlap(tensors, file, data_start);
  if (metadata) apply_quant_format_stamp(*metadata, tensors, file);
  return tensors;
}

}  // namespace glmrt::model_files
