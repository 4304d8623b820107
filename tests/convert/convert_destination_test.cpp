// Where convert writes and what --force may remove: an output that is, holds
// or lies inside the source (symlinks resolved, the `.partial` sibling
// included) is refused and the source left byte for byte as it was; --force
// replaces only a container convert wrote (its marker lists every file), and
// a folder without the marker, or a container holding other files, is kept
// even with --force, the message naming the path and why.
#include <glmrt/base/error.h>
#include <glmrt/convert/container_verify.h>
#include <glmrt/convert/convert.h>

#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>

#include "convert_test_dir.h"
#include "shell_command.h"

namespace glmrt::destination_test {
namespace {

namespace fs = std::filesystem;

const fs::path kTiny = fs::path(GLMRT_FIXTURES) / "glm_tiny";

std::string file_bytes(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every file under `dir` by relative path, with its bytes.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files[fs::relative(e.path(), dir).string()] = file_bytes(e.path());
  return files;
}

// A copy of glm_tiny (the f32 oracle checkpoint) at `dir`.
void copy_tiny(const fs::path& dir) {
  fs::create_directories(dir);
  fs::copy(kTiny, dir, fs::copy_options::recursive);
}

ConvertOptions f32_options(const fs::path& from, const fs::path& to, bool force) {
  ConvertOptions o;
  o.from = from;
  o.to = to;
  o.experts = o.dense = WeightBits::f32;
  o.embed = o.lm_head = WeightBits::f32;
  o.force = force;
  return o;
}

// convert_checkpoint(o) throws an Error whose message holds every `parts`.
void expect_refused(const ConvertOptions& o, std::initializer_list<std::string> parts) {
  try {
    convert_checkpoint(o);
    ADD_FAILURE() << "convert --from " << o.from << " --to " << o.to << " went ahead";
  } catch (const Error& e) {
    for (const auto& part : parts)
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

// The acceptance case, exactly as typed: the BF16 source used to be replaced
// by the container (status 0).
TEST(ConvertDestination, CommandWithTheSourceAsOutputFailsAndLeavesItUnchanged) {
  test::ConvertScratch dir("same-cli");
  const fs::path d = dir / "D";
  copy_tiny(d);
  const auto before = snapshot(d);
  const auto [status, output] = test::run_shell(fmt::format(
      "'{}' convert --from '{}' --to '{}' --force 2>&1", GLMRT_EXECUTABLE, d.string(), d.string()));
  EXPECT_NE(status, 0) << output;
  EXPECT_NE(output.find("is the source folder"), std::string::npos) << output;
  EXPECT_EQ(snapshot(d), before);
  EXPECT_FALSE(fs::exists(dir / "D.partial"));
}

TEST(ConvertDestination, OutputThatIsTheSourceIsRefusedWithAnySpelling) {
  test::ConvertScratch dir("same");
  const fs::path d = dir / "D";
  copy_tiny(d);
  fs::create_directory_symlink(d, dir / "link");
  const auto before = snapshot(d);
  for (const fs::path& to : {d, d / ".", dir / "D" / ".." / "D", dir / "link"}) {
    SCOPED_TRACE(to.string());
    expect_refused(f32_options(d, to, true), {"is the source folder"});
  }
  // The source spelled through the link, the output plainly.
  expect_refused(f32_options(dir / "link", d, true), {"is the source folder"});
  EXPECT_EQ(snapshot(d), before);
}

// --from P/hf --to P --force deleted P/hf and every other file in P.
TEST(ConvertDestination, OutputHoldingTheSourceIsRefused) {
  test::ConvertScratch dir("parent");
  const fs::path p = dir / "P";
  copy_tiny(p / "hf");
  std::ofstream(p / "notes.txt") << "mine";
  const auto before = snapshot(p);
  expect_refused(f32_options(p / "hf", p, true), {"holds the source folder"});
  EXPECT_EQ(snapshot(p), before);
}

TEST(ConvertDestination, OutputInsideTheSourceIsRefused) {
  test::ConvertScratch dir("inside");
  const fs::path d = dir / "D";
  copy_tiny(d);
  const auto before = snapshot(d);
  expect_refused(f32_options(d, d / "int8", false), {"lies inside the source folder"});
  EXPECT_EQ(snapshot(d), before);
}

// OUT.partial is where the unfinished output goes (and what --force empties).
TEST(ConvertDestination, PartialSiblingThatIsTheSourceIsRefused) {
  test::ConvertScratch dir("partial-source");
  const fs::path d = dir / "m.partial";
  copy_tiny(d);
  const auto before = snapshot(d);
  expect_refused(f32_options(d, dir / "m", true), {"is the source folder"});
  EXPECT_EQ(snapshot(d), before);
  // ... or a link to it.
  copy_tiny(dir / "src");
  fs::create_directory_symlink(dir / "src", dir / "out.partial");
  const auto source = snapshot(dir / "src");
  expect_refused(f32_options(dir / "src", dir / "out", true), {"is the source folder"});
  EXPECT_EQ(snapshot(dir / "src"), source);
}

TEST(ConvertDestination, FolderNotWrittenByConvertIsKeptEvenWithForce) {
  test::ConvertScratch dir("foreign");
  fs::create_directories(dir / "out");
  std::ofstream(dir / "out" / "keep.txt") << "mine";
  for (bool force : {false, true}) {
    SCOPED_TRACE(force ? "--force" : "no --force");
    expect_refused(
        f32_options(kTiny, dir / "out", force),
        {(dir / "out").string(), "not a container written by glmrt convert", kContainerMarkerFile});
    EXPECT_EQ(file_bytes(dir / "out" / "keep.txt"), "mine");
  }
  // A file where the folder would go is refused too.
  std::ofstream(dir / "file") << "mine";
  expect_refused(f32_options(kTiny, dir / "file", true), {"is not a folder"});
  EXPECT_EQ(file_bytes(dir / "file"), "mine");
}

TEST(ConvertDestination, ForceReplacesAContainerButNotFilesAddedToIt) {
  test::ConvertScratch dir("replace");
  const ConvertOptions o = f32_options(kTiny, dir / "out", false);
  convert_checkpoint(o);
  ASSERT_TRUE(fs::exists(dir / "out" / kContainerMarkerFile));
  expect_refused(o, {"already exists", "--force"});

  std::ofstream(dir / "out" / "notes.txt") << "mine";
  expect_refused(f32_options(kTiny, dir / "out", true), {"notes.txt", "did not write"});
  EXPECT_EQ(file_bytes(dir / "out" / "notes.txt"), "mine");
  EXPECT_NO_THROW(verify_container(dir / "out"));

  fs::remove(dir / "out" / "notes.txt");
  ConvertOptions forced = f32_options(kTiny, dir / "out", true);
  forced.dense = WeightBits::int8;
  convert_checkpoint(forced);
  EXPECT_NO_THROW(verify_container(dir / "out"));
  EXPECT_TRUE(fs::exists(dir / "out" / kContainerMarkerFile));
  EXPECT_FALSE(fs::exists(dir / "out.partial"));
}

TEST(ConvertDestination, PartialHoldingOtherFilesIsKeptEvenWithForce) {
  test::ConvertScratch dir("partial-foreign");
  fs::create_directories(dir / "out.partial");
  std::ofstream(dir / "out.partial" / "mine.txt") << "mine";
  expect_refused(f32_options(kTiny, dir / "out", true), {"mine.txt", "did not write"});
  EXPECT_EQ(file_bytes(dir / "out.partial" / "mine.txt"), "mine");
  EXPECT_FALSE(fs::exists(dir / "out"));
}

// A copy of models/glm-trained whose tokenizer and generation-config links
// dangle (their relative targets left behind): `glmrt run` refuses it, so
// convert refuses it too, naming the file, before it writes anything.
TEST(ConvertDestination, CarriedFileThatIsADanglingLinkIsRefused) {
  test::ConvertScratch dir("dangling");
  copy_tiny(dir / "src");
  for (const char* name : {"tokenizer.json", "generation_config.json"}) {
    fs::remove(dir / "src" / name);
    fs::create_symlink(fs::path("../glm-demo") / name, dir / "src" / name);
  }
  const auto before = snapshot(dir / "src");
  expect_refused(f32_options(dir / "src", dir / "out", false),
                 {"tokenizer.json", "symbolic link to a file that does not exist", "run refuses"});
  EXPECT_EQ(snapshot(dir / "src"), before);
  fs::remove(dir / "src" / "tokenizer.json");
  fs::copy_file(kTiny / "tokenizer.json", dir / "src" / "tokenizer.json");
  expect_refused(f32_options(dir / "src", dir / "out", false),
                 {"generation_config.json", "symbolic link to a file that does not exist"});
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir / "out")));
  EXPECT_FALSE(fs::exists(fs::symlink_status(dir / "out.partial")));
  EXPECT_TRUE(fs::is_symlink(dir / "src" / "generation_config.json"));
}

}  // namespace
}  // namespace glmrt::destination_test
