// The one rule every file glmrt writes follows (base/atomic_file.h): a FIFO,
// a socket or a folder at the path is refused naming what it is and never
// replaced, even with force; nothing goes inside the model folder being read
// or over a file it links to, even with force; an existing file of another
// kind is kept unless force; a failed write is an error that leaves the old
// file and no temporary.
#include <glmrt/base/atomic_file.h>
#include <glmrt/base/error.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <fstream>
#include <iterator>

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

class TempFolder {
 public:
  TempFolder() {
    std::string pattern =
        (fs::temp_directory_path() / ("glmrt-output-" + std::to_string(::getpid()) + "-XXXXXX"))
            .string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;
  ~TempFolder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  fs::path operator/(const std::string& name) const { return path_ / name; }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string bytes_of(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void put(const fs::path& file, const std::string& text) {
  std::ofstream(file, std::ios::binary) << text;
}

int entries_in(const fs::path& folder) {
  int n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(folder)) ++n;
  return n;
}

/// A kind recognised by its first line, "NOTE".
OutputRule note_rule(const fs::path& model_folder = {}, bool force = false) {
  return {OutputKind{"a note", [](const fs::path& f) { return read_file_head(f, 5) == "NOTE\n"; }},
          model_folder, force};
}

/// The message of the glmrt::Error write_file_atomically(file, ...) throws.
std::string refusal(const fs::path& file, const OutputRule& rule) {
  try {
    write_file_atomically(file, "NOTE\nnew\n", rule);
  } catch (const Error& e) {
    return e.what();
  }
  return "(written)";
}

TEST(OutputRule, FifoAndSocketAreRefusedNamingWhatTheyAreEvenWithForce) {
  TempFolder dir;
  const fs::path fifo = dir / "fifo", socket_path = dir / "socket";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(s, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  ASSERT_LT(socket_path.string().size(), sizeof address.sun_path);
  std::strcpy(address.sun_path, socket_path.c_str());
  ASSERT_EQ(::bind(s, reinterpret_cast<const sockaddr*>(&address), sizeof address), 0);
  for (bool force : {false, true}) {
    const std::string on_fifo = refusal(fifo, note_rule({}, force));
    EXPECT_THAT(on_fifo, HasSubstr(fifo.string()));
    EXPECT_THAT(on_fifo, HasSubstr("a named pipe (FIFO)"));
    EXPECT_THAT(refusal(socket_path, note_rule({}, force)), HasSubstr("a socket"));
    EXPECT_THAT(refusal(dir.path(), note_rule({}, force)), HasSubstr("a directory"));
  }
  ::close(s);
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_TRUE(fs::is_socket(socket_path));
  EXPECT_EQ(entries_in(dir.path()), 2);  // no temporary left
}

TEST(OutputRule, AFileOfAnotherKindIsKeptUnlessForced) {
  TempFolder dir;
  const fs::path profile = dir / "my.yaml";
  put(profile, "memory:\n  budget: 4GiB\n");
  const std::string message = refusal(profile, note_rule());
  EXPECT_THAT(message, HasSubstr(profile.string()));
  EXPECT_THAT(message, HasSubstr("exists and is not a note"));
  EXPECT_THAT(message, HasSubstr("--force"));
  EXPECT_EQ(bytes_of(profile), "memory:\n  budget: 4GiB\n");
  // An earlier note and an empty file are replaced; anything with force.
  const fs::path earlier = dir / "earlier", empty = dir / "empty";
  put(earlier, "NOTE\nold\n");
  put(empty, "");
  for (const fs::path& file : {earlier, empty}) {
    write_file_atomically(file, "NOTE\nnew\n", note_rule());
    EXPECT_EQ(bytes_of(file), "NOTE\nnew\n");
  }
  write_file_atomically(profile, "NOTE\nnew\n", note_rule({}, true));
  EXPECT_EQ(bytes_of(profile), "NOTE\nnew\n");
  EXPECT_EQ(entries_in(dir.path()), 3);
}

TEST(OutputRule, TheModelFolderAndWhatItLinksToAreRefusedEvenWithForce) {
  TempFolder dir;
  const fs::path model = dir / "model", elsewhere = dir / "blobs";
  fs::create_directories(model);
  fs::create_directories(elsewhere);
  put(model / "config.json", "{}");
  put(elsewhere / "shard", "weights");
  fs::create_symlink(elsewhere / "shard", model / "model.safetensors");
  fs::create_symlink(model / "config.json", dir / "config-link");
  for (bool force : {false, true}) {
    EXPECT_THAT(refusal(model / "config.json", note_rule(model, force)),
                HasSubstr("inside the model directory"));
    EXPECT_THAT(refusal(model / "new-file", note_rule(model, force)),
                HasSubstr("inside the model directory"));
    // A link to a model's file, and the file a model's link leads to.
    EXPECT_THAT(refusal(dir / "config-link", note_rule(model, force)),
                HasSubstr("inside the model directory"));
    const std::string linked = refusal(elsewhere / "shard", note_rule(model, force));
    EXPECT_THAT(linked, HasSubstr("which the model directory"));
    EXPECT_THAT(linked, HasSubstr("links to"));
  }
  EXPECT_EQ(bytes_of(model / "config.json"), "{}");
  EXPECT_EQ(bytes_of(elsewhere / "shard"), "weights");
  EXPECT_TRUE(fs::is_symlink(dir / "config-link"));
  EXPECT_EQ(entries_in(model), 2);
  EXPECT_EQ(entries_in(elsewhere), 1);
  // Beside the model is fine.
  write_file_atomically(dir / "note", "NOTE\n", note_rule(model));
  EXPECT_EQ(bytes_of(dir / "note"), "NOTE\n");
}

TEST(OutputRule, AFailedWriteIsAnErrorThatKeepsTheOldFile) {
  TempFolder dir;
  const fs::path file = dir / "note";
  put(file, "NOTE\nold\n");
  // A file size limit makes write(2) fail with EFBIG as a full disk fails
  // with ENOSPC (SIGXFSZ ignored, as a full disk sends no signal).
  struct rlimit saved {};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = saved;
  small.rlim_cur = 4096;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string message = "(written)";
  try {
    write_file_atomically(file, "NOTE\n" + std::string(8192, 'x'), note_rule());
  } catch (const Error& e) {
    message = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);
  EXPECT_THAT(message, HasSubstr(file.filename().string()));
  EXPECT_THAT(message, HasSubstr(std::strerror(EFBIG)));
  EXPECT_EQ(bytes_of(file), "NOTE\nold\n");
  EXPECT_EQ(entries_in(dir.path()), 1);
}

TEST(OutputRule, ATemporaryNameInUseIsNeverTruncated) {
  TempFolder dir;
  const fs::path file = dir / "note";
  const fs::path taken = dir / (".note." + std::to_string(::getpid()) + ".tmp");
  put(taken, "someone's\n");
  write_file_atomically(file, "NOTE\n", note_rule());
  EXPECT_EQ(bytes_of(taken), "someone's\n");
  EXPECT_EQ(bytes_of(file), "NOTE\n");
  EXPECT_EQ(entries_in(dir.path()), 2);
}

TEST(OutputRule, AFifoThatAppearsBeforeTheRenameIsNotReplaced) {
  TempFolder dir;
  const fs::path file = dir / "note";
  try {
    AtomicFile out(file, note_rule());
    out.write("NOTE\n");
    out.commit([&] { ASSERT_EQ(::mkfifo(file.c_str(), 0600), 0); });
    FAIL() << "renamed over a FIFO";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("a named pipe (FIFO)"));
  }
  EXPECT_TRUE(fs::is_fifo(file));
  EXPECT_EQ(entries_in(dir.path()), 1);
}

}  // namespace
}  // namespace glmrt
