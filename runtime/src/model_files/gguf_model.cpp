// A GGUF model of one file or of shards named as llama.cpp's gguf-split
// names them (NAME-00001-of-00003.gguf ...), each shard carrying split.no
// (from 0), split.count and split.tensors.count; the first holds the metadata.
#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/model_files/file_io.h>
#include <glmrt/model_files/gguf.h>
#include <glmrt/plugin/ggml_types.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <system_error>

namespace glmrt::gguf {

namespace {

using std::filesystem::path;

constexpr std::string_view kGgufExtension = ".gguf";

bool all_digits(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The .gguf files of `folder`, sorted.
std::vector<path> gguf_files_in(const path& folder) {
  std::error_code ec;
  std::filesystem::directory_iterator it(folder, ec);
  if (ec) fail("cannot list {}: {}", folder, ec.message());
  std::vector<path> found;
  for (const auto& entry : it)
    if (entry.path().extension() == kGgufExtension && entry.is_regular_file(ec))
      found.push_back(entry.path());
  std::sort(found.begin(), found.end());
  return found;
}

// The one model a folder holds: its single file, or the first of its shards.
path model_in_folder(const path& folder) {
  const std::vector<path> files = gguf_files_in(folder);
  if (files.empty()) fail("{} holds no .gguf file", folder);
  std::map<std::string, path> models;  // model name -> the file to open
  for (const path& file : files) {
    const std::string name = file.filename().string();
    const auto split = parse_split_name(name);
    const std::string model = split ? split_file_name(split->prefix, 1, split->count) : name;
    models.emplace(model, split ? folder / model : file);
  }
  if (models.size() > 1) {
    std::vector<std::string> names;
    for (const auto& [name, file] : models) names.push_back(printable(name));
    fail("{} holds {} GGUF models ({}); name the file to open", folder, models.size(),
         fmt::join(names, ", "));
  }
  return models.begin()->second;
}

// The shards `file` belongs to: itself alone, or every NAME-k-of-N beside it.
std::vector<path> shard_files(const path& file) {
  const auto split = parse_split_name(file.filename().string());
  if (!split) return {file};
  std::vector<path> shards;
  for (int k = 1; k <= split->count; ++k) {
    path shard = file.parent_path() / split_file_name(split->prefix, k, split->count);
    std::error_code ec;
    if (!std::filesystem::is_regular_file(shard, ec))
      fail("{}: shard {} of {} of this split GGUF model, {}, is missing", file, k, split->count,
           shard.filename());
    shards.push_back(std::move(shard));
  }
  return shards;
}

// Each shard's split.no and split.count agree with its name, and the tensor
// count of them all with split.tensors.count.
void check_split_keys(const std::vector<FileHeader>& headers, size_t tensor_total) {
  const int count = static_cast<int>(headers.size());
  const auto split = parse_split_name(headers[0].file.filename().string());
  if (!split) {
    const auto declared = headers[0].metadata.find_as<uint16_t>("split.count");
    if (declared && *declared > 1)
      fail(
          "{}: split.count says the model has {} shards, but the file name is not of the form "
          "NAME-00001-of-{:05}.gguf, so the other shards cannot be found",
          headers[0].file, *declared, *declared);
    return;
  }
  for (int i = 0; i < count; ++i) {
    const Metadata& metadata = headers[i].metadata;
    const path& file = headers[i].file;
    const auto declared = metadata.find_as<uint16_t>("split.count");
    if (!declared && count > 1)
      fail("{} has no split.count, expected {} for shard {} of {}", file, count, i + 1, count);
    if (declared && *declared != count)
      fail("{}: split.count is {}, but the file name says the model has {} shards", file, *declared,
           count);
    const auto number = metadata.find_as<uint16_t>("split.no");
    if (!number && count > 1)
      fail("{} has no split.no, expected {} for shard {} of {}", file, i, i + 1, count);
    if (number && *number != i)
      fail("{}: split.no is {}, but the file name makes it shard {} of {} (split.no {})", file,
           *number, i + 1, count, i);
  }
  // Once every shard is known to be in place, their tensors are counted.
  for (const FileHeader& header : headers) {
    const auto total = header.metadata.find_as<int64_t>("split.tensors.count");
    if (total && *total != static_cast<int64_t>(tensor_total))
      fail("{}: split.tensors.count is {}, but the {} shard(s) hold {} tensors", header.file,
           *total, count, tensor_total);
  }
}

}  // namespace

std::optional<SplitName> parse_split_name(std::string_view name) {
  // NAME-00001-of-00003.gguf: the tail after NAME is 15 characters + ".gguf".
  constexpr size_t kTail = 15;
  if (!name.ends_with(kGgufExtension)) return std::nullopt;
  const std::string_view stem = name.substr(0, name.size() - kGgufExtension.size());
  if (stem.size() <= kTail) return std::nullopt;
  const std::string_view tail = stem.substr(stem.size() - kTail);
  const std::string_view number = tail.substr(1, 5), count = tail.substr(10, 5);
  if (tail[0] != '-' || tail.substr(6, 4) != "-of-" || !all_digits(number) || !all_digits(count))
    return std::nullopt;
  SplitName out{std::string(stem.substr(0, stem.size() - kTail)), std::stoi(std::string(number)),
                std::stoi(std::string(count))};
  if (out.count < 1 || out.number < 1 || out.number > out.count) return std::nullopt;
  return out;
}

std::string split_file_name(std::string_view prefix, int number, int count) {
  return fmt::format("{}-{:05}-of-{:05}.gguf", prefix, number, count);
}

int64_t TensorInfo::numel() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;  // checked against overflow when read
  return n;
}

std::string_view TensorInfo::type_name() const {
  const char* name = plugin::ggml_type_traits(type).name;
  return name ? name : "unknown";
}

std::vector<path> model_file_paths(const path& source) {
  std::error_code ec;
  const bool folder = std::filesystem::is_directory(source, ec);
  return shard_files(folder ? model_in_folder(source) : source);
}

Model Model::open(const path& source) {
  Model model;
  model.source_ = source;
  model.files_ = model_file_paths(source);
  size_t total = 0;
  for (size_t i = 0; i < model.files_.size(); ++i) {
    model.fds_.push_back(model_files::open_read_only(model.files_[i]));
    model.headers_.push_back(
        read_file_header(model.fds_.back(), model.files_[i], static_cast<int>(i)));
    total += model.headers_.back().tensors.size();
  }
  check_split_keys(model.headers_, total);
  model.tensors_.reserve(total);
  for (const FileHeader& header : model.headers_) {
    for (const TensorInfo& t : header.tensors) {
      const auto [it, added] = model.by_name_.emplace(t.name, model.tensors_.size());
      if (!added)
        fail("tensor '{}' is in both {} and {}", printable(t.name),
             model.files_[model.tensors_[it->second].file_index], header.file);
      model.tensors_.push_back(t);
    }
  }
  return model;
}

Model::Model(Model&& other) noexcept
    : source_(std::move(other.source_)),
      files_(std::move(other.files_)),
      fds_(std::move(other.fds_)),
      headers_(std::move(other.headers_)),
      tensors_(std::move(other.tensors_)),
      by_name_(std::move(other.by_name_)) {
  other.fds_.clear();
}

Model& Model::operator=(Model&& other) noexcept {
  if (this != &other) {
    close_all();
    source_ = std::move(other.source_);
    files_ = std::move(other.files_);
    fds_ = std::move(other.fds_);
    headers_ = std::move(other.headers_);
    tensors_ = std::move(other.tensors_);
    by_name_ = std::move(other.by_name_);
    other.fds_.clear();
  }
  return *this;
}

Model::~Model() {
  close_all();
}

void Model::close_all() noexcept {
  for (int fd : fds_) model_files::close_fd(fd);
  fds_.clear();
}

const TensorInfo* Model::find(std::string_view name) const {
  const auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

const TensorInfo& Model::at(std::string_view name) const {
  const TensorInfo* t = find(name);
  if (t == nullptr) fail("tensor '{}' is not in {}", printable(name), source_);
  return *t;
}

void Model::read_raw(const TensorInfo& t, std::span<std::byte> dst) const {
  if (dst.size() != t.byte_size)
    fail("tensor '{}' is {} bytes, asked to read {}", printable(t.name), t.byte_size, dst.size());
  const int index = t.file_index;
  model_files::pread_exact(fd(index), t.offset, dst, files_.at(index),
                           fmt::format("tensor '{}'", printable(t.name)));
}

}  // namespace glmrt::gguf
