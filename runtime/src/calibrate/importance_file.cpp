#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/calibrate/importance_file.h>
#include <glmrt/history/history_file.h>

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

namespace glmrt {
namespace {

using nlohmann::ordered_json;

// A header larger than this is no importance file (GLM-5's ~60k entries
// need a few MB).
constexpr uint64_t kMaxImportanceHeader = 256ull << 20;
// One F32 per input channel of every weight matrix: GLM-5's ~60k matrices of
// 2048-6144 columns take ~1.2 GB.
constexpr InputKind kImportanceKind{"the importance file", 8192 * kInputMiB, true};

int64_t parse_importance_count(const ordered_json& meta, const std::string& key,
                               const std::filesystem::path& file) {
  const auto it = meta.find(key);
  if (it == meta.end() || !it->is_string())
    fail("{}: __metadata__ lacks the string \"{}\"", file, key);
  const std::string& text = it->get_ref<const std::string&>();
  size_t used = 0;
  int64_t value = -1;
  try {
    value = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || value < 0)
    fail("{}: __metadata__ \"{}\" is `{}`, not a count", file, key, text);
  return value;
}

}  // namespace

std::span<const float> ImportanceTable::find(const std::string& weight) const {
  const auto it = entries.find(weight);
  return it == entries.end() ? std::span<const float>() : std::span(it->second.mean_square);
}

void write_importance_file(const std::filesystem::path& file, const ImportanceTable& table) {
  ordered_json header;
  ordered_json meta{{"format", kImportanceFormat},
                    {"statistic", "mean of x^2 per input channel"},
                    {"tokens", std::to_string(table.tokens)}};
  uint64_t offset = 0;
  for (const auto& [name, e] : table.entries) {
    meta["rows." + name] = std::to_string(e.rows);
    const uint64_t bytes = e.mean_square.size() * sizeof(float);
    header[name] = {{"dtype", "F32"},
                    {"shape", {e.mean_square.size()}},
                    {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  header["__metadata__"] = meta;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-aligned
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((uint64_t{text.size()} >> (8 * i)) & 0xff);
  out += text;
  for (const auto& [name, e] : table.entries)
    out.append(reinterpret_cast<const char*>(e.mean_square.data()),
               e.mean_square.size() * sizeof(float));
  write_file_atomically(file, out);
}

ImportanceTable read_importance_file(const std::filesystem::path& file) {
  const std::string bytes = read_input_file(file, kImportanceKind);
  if (bytes.size() < 8) fail("{}: {} bytes: not a safetensors importance file", file, bytes.size());
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t{static_cast<unsigned char>(bytes[i])} << (8 * i);
  if (n > kMaxImportanceHeader || n > bytes.size() - 8)
    fail("{}: the header claims {} bytes, the file holds {}: not a safetensors importance file",
         file, n, bytes.size());
  ordered_json header;
  try {
    header = ordered_json::parse(bytes.substr(8, n));
  } catch (const ordered_json::exception& e) {
    fail("{}: the safetensors header is not valid JSON: {}", file, e.what());
  }
  if (!header.is_object()) fail("{}: the safetensors header is not a JSON object", file);
  const auto meta = header.find("__metadata__");
  if (meta == header.end() || !meta->is_object() || meta->value("format", "") != kImportanceFormat)
    fail(
        "{}: not an importance file: __metadata__.format is not \"{}\" (write one with `glmrt "
        "calibrate`)",
        file, kImportanceFormat);
  ImportanceTable table;
  table.tokens = parse_importance_count(*meta, "tokens", file);
  const uint64_t data = 8 + n, data_bytes = bytes.size() - data;
  for (const auto& [name, t] : header.items()) {
    if (name == "__metadata__") continue;
    const auto where = [&] { return fmt::format("{}: tensor {}", file, name); };
    if (!t.is_object() || t.value("dtype", "") != "F32") fail("{}: dtype must be F32", where());
    const auto& shape = t.value("shape", ordered_json());
    const auto& offsets = t.value("data_offsets", ordered_json());
    if (!shape.is_array() || shape.size() != 1 || !shape[0].is_number_unsigned() ||
        shape[0].get<uint64_t>() == 0)
      fail("{}: shape must be one positive length [cols], found {}", where(), shape.dump());
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned())
      fail("{}: data_offsets must be two byte offsets, found {}", where(), offsets.dump());
    const uint64_t cols = shape[0].get<uint64_t>();
    const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (begin > end || end > data_bytes || end - begin != cols * sizeof(float))
      fail("{}: data_offsets [{}, {}) do not hold {} floats within the file's {} data bytes",
           where(), begin, end, cols, data_bytes);
    ImportanceTable::Entry e;
    e.mean_square.resize(cols);
    std::memcpy(e.mean_square.data(), bytes.data() + data + begin, cols * sizeof(float));
    for (size_t i = 0; i < cols; ++i)
      if (!std::isfinite(e.mean_square[i]) || e.mean_square[i] < 0.f)
        fail("{}: value {} is {}; importances are finite and non-negative", where(), i,
             e.mean_square[i]);
    e.rows = parse_importance_count(*meta, "rows." + name, file);
    table.entries.emplace(name, std::move(e));
  }
  return table;
}

}  // namespace glmrt
