// Every file glmrt reads whole (configs, tokenizers, profiles, histories,
// traces, requests, texts) is read here, so every one gets the same checks:
// only a regular file is read (a FIFO, a device or a folder is refused, and
// opening never blocks on a FIFO), a file larger than its kind ever needs is
// refused before a byte is read, and a text format holding a NUL byte is
// refused (nlohmann's parser stops at a NUL and would ignore what follows).
// Header-only: the text library does not link the core.
#pragma once

#include <glmrt/base/error.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace glmrt {

inline constexpr uint64_t kInputMiB = uint64_t{1} << 20;

/// What a file holds and how large it may be.
struct InputKind {
  std::string_view what;   // "the tokenizer file": errors read "FILE: cannot read WHAT: ..."
  uint64_t max_bytes;      // a larger file is refused before a byte is read
  bool allow_nul = false;  // binary files and free text may hold NUL bytes
};

/// The kinds read from more than one place. Each cap is far above what a real
/// file of its kind holds and far below what reading it would cost.
namespace input_kinds {
// A few KB of numbers and names.
inline constexpr InputKind model_config{"the model config", 16 * kInputMiB};
// ~100 bytes per tensor: ~10 MB for a checkpoint of 100 000 tensors.
inline constexpr InputKind shard_index{"the shard index", 256 * kInputMiB};
// GLM-5's is ~20 MB (the vocabulary and the merges).
inline constexpr InputKind tokenizer{"the tokenizer file", 256 * kInputMiB};
inline constexpr InputKind generation_config{"the generation config", 16 * kInputMiB};
// The chat template and the added tokens.
inline constexpr InputKind tokenizer_config{"the tokenizer config", 64 * kInputMiB};
inline constexpr InputKind profile{"the profile", 16 * kInputMiB};
inline constexpr InputKind chat_request{"the request file", 64 * kInputMiB};
// Per case, per position, the top logits and the routed experts of each layer
// (glm_tiny's is 1.5 MB).
inline constexpr InputKind reference{"the reference file (ref.json)", 2048 * kInputMiB};
// Text to tokenize (calibration, perplexity, validation): a NUL is just a byte.
inline constexpr InputKind text_to_tokenize{"the text", 1024 * kInputMiB, true};
}  // namespace input_kinds

/// "a directory", "a named pipe (FIFO)", ...: what a file that is not a
/// regular one is, for messages.
inline const char* describe_file_type(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a named pipe (FIFO)";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "a special file";
}

namespace input_file_detail {

/// Closes on scope exit.
struct Descriptor {
  int fd = -1;
  Descriptor() = default;
  explicit Descriptor(int f) : fd(f) {}
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

/// "16 MiB" or "4000 bytes": how limits are shown.
inline std::string size_text(uint64_t bytes) {
  if (bytes < kInputMiB) return fmt::format("{} bytes", bytes);
  if (bytes % kInputMiB == 0) return fmt::format("{} MiB", bytes / kInputMiB);
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / kInputMiB);
}

[[noreturn]] inline void refuse(const std::filesystem::path& file, const InputKind& kind,
                                std::string_view reason) {
  fail("{}: cannot read {}: {}", file.string(), kind.what, reason);
}

/// Reads `fd` to its end, at most kind.max_bytes; `size_hint` sizes the
/// buffer. NUL bytes are looked for as they arrive, so /dev/zero on standard
/// input fails at once.
inline std::string read_to_end(int fd, uint64_t size_hint, const std::filesystem::path& file,
                               const InputKind& kind, bool stream) {
  std::string text;
  text.reserve(static_cast<size_t>(size_hint));
  char chunk[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) refuse(file, kind, std::strerror(errno));
    if (n == 0) break;
    if (text.size() + static_cast<size_t>(n) > kind.max_bytes)
      refuse(file, kind,
             fmt::format("it holds more than {}, the most {} may hold{}", size_text(kind.max_bytes),
                         kind.what, stream ? "" : " (did it grow while it was read?)"));
    const size_t start = text.size();
    text.append(chunk, static_cast<size_t>(n));
    if (kind.allow_nul) continue;
    if (const size_t at = text.find('\0', start); at != std::string::npos) {
      const auto line =
          1 + std::count(text.begin(), text.begin() + static_cast<ptrdiff_t>(at), '\n');
      refuse(file, kind,
             fmt::format("byte {} (line {}) is a NUL byte, which a text file never holds: is it "
                         "binary, or corrupt?",
                         at, line));
    }
  }
  return text;
}

/// Opens `file`, a regular file of at most kind.max_bytes, for blocking
/// reads and sets `size`; -1 when `optional` and nothing is there.
inline int open_regular(const std::filesystem::path& file, const InputKind& kind, bool optional,
                        uint64_t& size) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer.
  int fd;
  do {
    fd = ::open(file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    const int err = errno;
    struct stat link {};
    if (err == ENOENT && ::lstat(file.c_str(), &link) == 0)
      refuse(file, kind, "it is a symbolic link to a file that does not exist");
    if (err == ENOENT && optional) return -1;
    if (err == ELOOP) refuse(file, kind, "its symbolic links form a loop");
    struct stat st {};
    if (err == ENXIO && ::stat(file.c_str(), &st) == 0)  // a socket cannot be opened
      refuse(file, kind,
             fmt::format("it is {}, expected a regular file", describe_file_type(st.st_mode)));
    refuse(file, kind, std::strerror(err));
  }
  Descriptor guard(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) refuse(file, kind, std::strerror(errno));
  if (!S_ISREG(st.st_mode))
    refuse(file, kind,
           fmt::format("it is {}, expected a regular file", describe_file_type(st.st_mode)));
  size = static_cast<uint64_t>(st.st_size);
  if (size > kind.max_bytes)
    refuse(file, kind,
           fmt::format("it holds {} bytes, more than the {} {} may hold", size,
                       size_text(kind.max_bytes), kind.what));
  // Back to blocking reads (a regular file never blocks, but a plugin's
  // network file system might say EAGAIN otherwise).
  ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  guard.fd = -1;
  return fd;
}

/// Opens and reads `file`; nullopt when `optional` and nothing is there.
inline std::optional<std::string> read(const std::filesystem::path& file, const InputKind& kind,
                                       bool optional) {
  uint64_t size = 0;
  const int fd = open_regular(file, kind, optional, size);
  if (fd < 0) return std::nullopt;
  const Descriptor guard(fd);
  return read_to_end(fd, size, file, kind, false);
}

}  // namespace input_file_detail

/// The bytes of `file`, a regular file of at most kind.max_bytes (and without
/// NUL bytes unless kind.allow_nul). Errors read "FILE: cannot read WHAT:
/// REASON" and say what the file is when it is not a regular one.
inline std::string read_input_file(const std::filesystem::path& file, const InputKind& kind) {
  return *input_file_detail::read(file, kind, false);
}

/// The same for a file that may be absent: nullopt when nothing is at
/// `file`. A file that is there but cannot be read (a folder, a FIFO, a
/// dangling symbolic link, too large) is an error, never "absent".
inline std::optional<std::string> read_input_file_if_present(const std::filesystem::path& file,
                                                             const InputKind& kind) {
  return input_file_detail::read(file, kind, true);
}

/// The bytes of an already open stream (standard input, which may be a pipe
/// or a terminal), with the same cap and NUL rule; `name` names it in errors.
inline std::string read_input_stream(int fd, std::string_view name, const InputKind& kind) {
  return input_file_detail::read_to_end(fd, 0, std::filesystem::path(name), kind, true);
}

/// A file or an open stream read piece by piece, with read_input_file's
/// checks and cap: for texts too large to hold whole (tokenize, perplexity).
/// NUL bytes are only refused when kind.allow_nul is false.
class InputReader {
 public:
  /// `file` must be a regular file of at most kind.max_bytes.
  static InputReader open(const std::filesystem::path& file, const InputKind& kind) {
    uint64_t size = 0;
    const int fd = input_file_detail::open_regular(file, kind, false, size);
    return InputReader(fd, true, file, kind, size);
  }
  /// Standard input or another open stream, left open.
  static InputReader stream(int fd, std::string_view name, const InputKind& kind) {
    return InputReader(fd, false, std::filesystem::path(name), kind, 0);
  }
  InputReader(InputReader&& other) noexcept
      : fd_(std::exchange(other.fd_, -1)),
        owned_(other.owned_),
        file_(std::move(other.file_)),
        kind_(other.kind_),
        size_(other.size_),
        read_(other.read_),
        buffer_(std::move(other.buffer_)) {}
  InputReader& operator=(InputReader&&) = delete;
  InputReader(const InputReader&) = delete;
  InputReader& operator=(const InputReader&) = delete;
  ~InputReader() {
    if (owned_ && fd_ >= 0) ::close(fd_);
  }

  /// The next bytes (at most `max_bytes`); empty at the end. Valid until
  /// the next call.
  std::string_view next(std::size_t max_bytes) {
    buffer_.resize(max_bytes);
    ssize_t n;
    do {
      n = ::read(fd_, buffer_.data(), max_bytes);
    } while (n < 0 && errno == EINTR);
    if (n < 0) input_file_detail::refuse(file_, kind_, std::strerror(errno));
    const auto got = static_cast<std::size_t>(n);
    if (read_ + got > kind_.max_bytes)
      input_file_detail::refuse(
          file_, kind_,
          fmt::format("it holds more than {}, the most {} may hold",
                      input_file_detail::size_text(kind_.max_bytes), kind_.what));
    if (!kind_.allow_nul)
      if (const auto at = std::string_view(buffer_.data(), got).find('\0');
          at != std::string_view::npos)
        input_file_detail::refuse(
            file_, kind_,
            fmt::format("byte {} is a NUL byte, which a text file never holds", read_ + at));
    read_ += got;
    return {buffer_.data(), got};
  }
  /// The file's size when opened (0 for a stream).
  uint64_t size() const { return size_; }
  const std::filesystem::path& file() const { return file_; }

 private:
  InputReader(int fd, bool owned, std::filesystem::path file, const InputKind& kind, uint64_t size)
      : fd_(fd), owned_(owned), file_(std::move(file)), kind_(kind), size_(size) {}

  int fd_;
  bool owned_;
  std::filesystem::path file_;
  InputKind kind_;
  uint64_t size_ = 0;
  uint64_t read_ = 0;
  std::string buffer_;
};

/// The lines of a text read with read_input_file, for line-oriented formats.
class InputLines {
 public:
  explicit InputLines(std::string_view text) : rest_(text) {}
  /// The next line without its '\n'; false after the last one.
  bool next(std::string_view& line) {
    if (rest_.empty()) return false;
    ++number_;
    const size_t end = rest_.find('\n');
    if (end == std::string_view::npos) {
      line = rest_;
      rest_ = {};
      last_cut_ = true;
      return true;
    }
    line = rest_.substr(0, end);
    rest_.remove_prefix(end + 1);
    return true;
  }
  /// 1-based number of the line next() returned last.
  int64_t number() const { return number_; }
  /// True once next() has returned a last line that had no '\n': the file
  /// ends mid-line (a write that was cut short).
  bool last_line_cut() const { return last_cut_; }

 private:
  std::string_view rest_;
  int64_t number_ = 0;
  bool last_cut_ = false;
};

}  // namespace glmrt
