#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/calibrate/importance_file.h>
#include <glmrt/history/history_file.h>
#include <glmrt/model_files/file_io.h>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>

namespace glmrt {
namespace {

using nlohmann::ordered_json;

// A header larger than this is no importance file (GLM-5's ~60k entries
// need a few MB).
constexpr uint64_t kMaxImportanceHeader = 256ull << 20;

// Writes all of `bytes` to `fd` (the file `file`), or throws naming it.
void write_all_to_importance(int fd, std::span<const std::byte> bytes,
                             const std::filesystem::path& file) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) fail("{}: cannot write: {}", file, std::strerror(errno));
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
}

std::string importance_header_length(uint64_t v) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xff);
  return out;
}

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

OutputKind importance_output_kind() {
  return {"an importance file (glmrt calibrate's)", [](const std::filesystem::path& file) {
            const std::string length = read_file_head(file, 8);
            if (length.size() != 8) return false;
            uint64_t n = 0;
            for (int i = 0; i < 8; ++i)
              n |= uint64_t{static_cast<unsigned char>(length[i])} << (8 * i);
            if (n > kMaxImportanceHeader) return false;
            const std::string head = read_file_head(file, 8 + n);
            return head.size() == 8 + n && head[8] == '{' &&
                   (head.find(fmt::format("\"format\":\"{}\"", kImportanceFormat)) !=
                        std::string::npos ||
                    head.find(fmt::format("\"format\":\"{}\"", kImportanceFormatWithMoments)) !=
                        std::string::npos);
          }};
}

std::span<const float> ImportanceTable::find(const std::string& weight) const {
  const auto it = entries.find(weight);
  return it == entries.end() ? std::span<const float>() : std::span(it->second.mean_square);
}

void write_importance_file(const std::filesystem::path& file, const ImportanceTable& table,
                           const std::filesystem::path& model_folder, bool force) {
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
  write_file_atomically(file, out, OutputRule{importance_output_kind(), model_folder, force});
}

ImportanceTable read_importance_file(const std::filesystem::path& file) {
  // Read by parts, never whole: a file with second moments holds GBs.
  const int fd = model_files::open_read_only(file);
  struct Closer {
    int fd;
    ~Closer() { model_files::close_fd(fd); }
  } closer{fd};
  const uint64_t size = model_files::file_size(fd, file);
  if (size < 8) fail("{}: {} bytes: not a safetensors importance file", file, size);
  std::string prefix(8, '\0');
  model_files::pread_exact(fd, 0, std::as_writable_bytes(std::span(prefix)), file, "the header");
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= uint64_t{static_cast<unsigned char>(prefix[i])} << (8 * i);
  if (n > kMaxImportanceHeader || n > size - 8)
    fail("{}: the header claims {} bytes, the file holds {}: not a safetensors importance file",
         file, n, size);
  std::string header_text(n, '\0');
  model_files::pread_exact(fd, 8, std::as_writable_bytes(std::span(header_text)), file,
                           "the header");
  if (header_text.find('\0') != std::string::npos)
    fail("{}: the safetensors header holds a NUL byte: not an importance file", file);
  ordered_json header;
  try {
    header = ordered_json::parse(header_text);
  } catch (const ordered_json::exception& e) {
    fail("{}: the safetensors header is not valid JSON: {}", file, e.what());
  }
  if (!header.is_object()) fail("{}: the safetensors header is not a JSON object", file);
  const auto meta = header.find("__metadata__");
  const std::string format =
      meta != header.end() && meta->is_object() ? meta->value("format", "") : "";
  if (format != kImportanceFormat && format != kImportanceFormatWithMoments)
    fail(
        "{}: not an importance file: __metadata__.format is not \"{}\" or \"{}\" (write one with "
        "`glmrt calibrate`)",
        file, kImportanceFormat, kImportanceFormatWithMoments);
  ImportanceTable table;
  table.file = file;
  table.version = format == kImportanceFormat ? 1 : 2;
  table.tokens = parse_importance_count(*meta, "tokens", file);
  const uint64_t data = 8 + n, data_bytes = size - data;
  std::map<std::string, ImportanceTable::MomentRef> by_tensor;
  for (const auto& [name, t] : header.items()) {
    if (name == "__metadata__") continue;
    const auto where = [&] { return fmt::format("{}: tensor {}", file, name); };
    const bool moment = table.version == 2 && name.starts_with("moment.");
    if (!t.is_object() || t.value("dtype", "") != "F32") fail("{}: dtype must be F32", where());
    const auto& shape = t.value("shape", ordered_json());
    const auto& offsets = t.value("data_offsets", ordered_json());
    const size_t dims = moment ? 2 : 1;
    bool shape_ok = shape.is_array() && shape.size() == dims;
    for (size_t d = 0; shape_ok && d < dims; ++d)
      shape_ok = shape[d].is_number_unsigned() && shape[d].get<uint64_t>() > 0 &&
                 shape[d].get<uint64_t>() <= (1u << 20) && shape[d] == shape[0];
    if (!shape_ok)
      fail("{}: shape must be {}, found {}", where(),
           moment ? "a square [cols, cols] of a positive size" : "one positive length [cols]",
           shape.dump());
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned())
      fail("{}: data_offsets must be two byte offsets, found {}", where(), offsets.dump());
    const uint64_t cols = shape[0].get<uint64_t>(), values = moment ? cols * cols : cols;
    const uint64_t begin = offsets[0].get<uint64_t>(), end = offsets[1].get<uint64_t>();
    if (begin > end || end > data_bytes || end - begin != values * sizeof(float))
      fail("{}: data_offsets [{}, {}) do not hold {} floats within the file's {} data bytes",
           where(), begin, end, values, data_bytes);
    if (moment) {
      ImportanceTable::MomentRef ref;
      ref.tensor = name;
      ref.cols = static_cast<int64_t>(cols);
      ref.rows = parse_importance_count(*meta, "rows." + name, file);
      ref.offset = data + begin;
      by_tensor.emplace(name, std::move(ref));
      continue;
    }
    ImportanceTable::Entry e;
    e.mean_square.resize(cols);
    model_files::pread_exact(fd, data + begin, std::as_writable_bytes(std::span(e.mean_square)),
                             file, fmt::format("tensor {}", name));
    for (size_t i = 0; i < cols; ++i)
      if (!std::isfinite(e.mean_square[i]) || e.mean_square[i] < 0.f)
        fail("{}: value {} is {}; importances are finite and non-negative", where(), i,
             e.mean_square[i]);
    e.rows = parse_importance_count(*meta, "rows." + name, file);
    table.entries.emplace(name, std::move(e));
  }
  for (const auto& [key, value] : meta->items()) {
    const bool fallback = key.starts_with("moment_fallback_of.");
    if (!key.starts_with("moment_of.") && !fallback) continue;
    const std::string weight =
        key.substr(std::strlen(fallback ? "moment_fallback_of." : "moment_of."));
    if (!value.is_string()) fail("{}: __metadata__ \"{}\" must name a moment.* tensor", file, key);
    const auto it = by_tensor.find(value.get<std::string>());
    if (it == by_tensor.end())
      fail("{}: __metadata__ \"{}\" names {}, which the file does not hold", file, key,
           value.dump());
    const auto diag = table.entries.find(weight);
    if (diag != table.entries.end() &&
        static_cast<int64_t>(diag->second.mean_square.size()) != it->second.cols)
      fail("{}: __metadata__ \"{}\": {} is {} wide, the weight's statistics {}", file, key,
           it->second.tensor, it->second.cols, diag->second.mean_square.size());
    (fallback ? table.fallback_moments : table.moments).emplace(weight, it->second);
  }
  return table;
}

const ImportanceTable::MomentRef* ImportanceTable::find_moments(const std::string& weight) const {
  const auto it = moments.find(weight);
  return it == moments.end() ? nullptr : &it->second;
}

const ImportanceTable::MomentRef* ImportanceTable::find_fallback_moments(
    const std::string& weight) const {
  const auto it = fallback_moments.find(weight);
  return it == fallback_moments.end() ? nullptr : &it->second;
}

std::vector<float> ImportanceTable::read_moments(const MomentRef& ref) const {
  std::vector<float> sums(static_cast<size_t>(ref.cols * ref.cols));
  const int fd = model_files::open_read_only(file);
  struct Closer {
    int fd;
    ~Closer() { model_files::close_fd(fd); }
  } closer{fd};
  model_files::pread_exact(fd, ref.offset, std::as_writable_bytes(std::span(sums)), file,
                           fmt::format("tensor {}", ref.tensor));
  for (size_t i = 0; i < sums.size(); ++i)
    if (!std::isfinite(sums[i]))
      fail("{}: tensor {}: value {} is {}; second moments are finite", file, ref.tensor, i,
           sums[i]);
  return sums;
}

ImportanceFileWriter::ImportanceFileWriter(std::filesystem::path file,
                                           const std::filesystem::path& model_folder, bool force)
    : file_(std::move(file)), rule_{importance_output_kind(), model_folder, force} {
  // Refused before calibration's work, which may take hours.
  check_output_file(file_, rule_);
  fd_ = create_file_beside(file_, "moments.tmp", data_file_);
}

ImportanceFileWriter::~ImportanceFileWriter() {
  if (fd_ >= 0) ::close(fd_);
  std::error_code ec;
  std::filesystem::remove(data_file_, ec);
}

void ImportanceFileWriter::add_moment(const std::string& key, int64_t cols, int64_t rows,
                                      std::span<const float> sums) {
  if (fd_ < 0) fail("{}: second moments added after finish()", file_);
  if (static_cast<int64_t>(sums.size()) != cols * cols)
    fail("{}: {} holds {} values, not {}x{}", file_, key, sums.size(), cols, cols);
  write_all_to_importance(fd_, std::as_bytes(sums), data_file_);
  added_.push_back({key, cols, rows, data_bytes_});
  data_bytes_ += sums.size_bytes();
}

void ImportanceFileWriter::finish(const ImportanceTable& table,
                                  const std::map<std::string, std::string>& weight_keys,
                                  const std::map<std::string, std::string>& weight_fallbacks) {
  ordered_json header;
  ordered_json meta{{"format", kImportanceFormatWithMoments},
                    {"statistic", "mean of x^2 per input channel"},
                    {"moments", "sum over calibration rows of x x^T, accumulated in f32"},
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
  std::set<std::string> written;
  for (const Added& a : added_) {
    const std::string tensor = "moment." + a.key;
    const uint64_t bytes = static_cast<uint64_t>(a.cols * a.cols) * sizeof(float);
    meta["rows." + tensor] = std::to_string(a.rows);
    header[tensor] = {{"dtype", "F32"},
                      {"shape", {a.cols, a.cols}},
                      {"data_offsets", {offset + a.offset, offset + a.offset + bytes}}};
    written.insert(a.key);
  }
  for (const auto& [weight, key] : weight_keys)
    if (written.count(key)) meta["moment_of." + weight] = "moment." + key;
  for (const auto& [weight, key] : weight_fallbacks)
    if (written.count(key)) meta["moment_fallback_of." + weight] = "moment." + key;
  header["__metadata__"] = meta;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data starts 8-aligned
  std::string head = importance_header_length(text.size()) + text;
  for (const auto& [name, e] : table.entries)
    head.append(reinterpret_cast<const char*>(e.mean_square.data()),
                e.mean_square.size() * sizeof(float));
  if (fd_ < 0) fail("{}: finished twice", file_);
  const int data_fd = fd_;
  fd_ = -1;
  if (::close(data_fd) != 0) fail("{}: cannot write: {}", data_file_, std::strerror(errno));
  AtomicFile out(file_, rule_);
  out.write(head);
  const int in = model_files::open_read_only(data_file_);
  struct InCloser {
    int fd;
    ~InCloser() { model_files::close_fd(fd); }
  } in_closer{in};
  std::vector<std::byte> chunk(8u << 20);
  for (uint64_t at = 0; at < data_bytes_; at += chunk.size()) {
    const auto part = std::span(chunk).first(std::min<uint64_t>(chunk.size(), data_bytes_ - at));
    model_files::pread_exact(in, at, part, data_file_, "the second moments");
    out.write(std::string_view(reinterpret_cast<const char*>(part.data()), part.size()));
  }
  out.commit();
}

}  // namespace glmrt
