// The importance file: what is written reads back equal, and anything that is
// not a well-formed importance file is refused naming the file (and the
// tensor, when one is at fault).
#include <glmrt/base/error.h>
#include <glmrt/calibrate/importance_file.h>

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <string>

#include <fmt/format.h>

namespace glmrt {
namespace {

namespace fs = std::filesystem;

class ImportanceScratch {
 public:
  ImportanceScratch()
      : dir_(fs::temp_directory_path() / fmt::format("glmrt-importance-{}", ::getpid())) {
    fs::create_directories(dir_);
  }
  ~ImportanceScratch() {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }
  fs::path operator/(const std::string& name) const { return dir_ / name; }

 private:
  fs::path dir_;
};

ImportanceTable sample_table() {
  ImportanceTable t;
  t.tokens = 123;
  t.entries["model.layers.0.self_attn.q_a_proj.weight"] = {{0.5f, 1.f, 2.25f, 0.f}, 123};
  t.entries["model.layers.1.mlp.experts.3.down_proj.weight"] = {{1e-6f, 7.f}, 17};
  return t;
}

void write_raw(const fs::path& file, const std::string& header, const std::string& data) {
  std::ofstream out(file, std::ios::binary);
  std::string head(8, '\0');
  for (int i = 0; i < 8; ++i) head[i] = static_cast<char>((header.size() >> (8 * i)) & 0xff);
  out << head << header << data;
}

std::string refusal(const fs::path& file) {
  try {
    read_importance_file(file);
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(ImportanceFile, RoundTrips) {
  ImportanceScratch dir;
  const ImportanceTable t = sample_table();
  write_importance_file(dir / "stats.safetensors", t);
  const ImportanceTable r = read_importance_file(dir / "stats.safetensors");
  EXPECT_EQ(r.tokens, 123);
  ASSERT_EQ(r.entries.size(), 2u);
  for (const auto& [name, e] : t.entries) {
    ASSERT_TRUE(r.entries.count(name)) << name;
    EXPECT_EQ(r.entries.at(name).mean_square, e.mean_square) << name;
    EXPECT_EQ(r.entries.at(name).rows, e.rows) << name;
  }
  EXPECT_TRUE(r.find("lm_head.weight").empty());
  // Written through a temporary that is gone afterwards.
  for (const auto& f : fs::directory_iterator(dir / ""))
    EXPECT_EQ(f.path().filename(), "stats.safetensors");
}

TEST(ImportanceFile, RefusesBadFilesNamingThem) {
  ImportanceScratch dir;
  const fs::path file = dir / "bad.safetensors";
  const std::string name = file.string();
  const std::string meta =
      R"("__metadata__":{"format":"glmrt-importance-1","tokens":"4","rows.x":"4"})";

  write_raw(file, "{", "");
  EXPECT_NE(refusal(file).find(name), std::string::npos) << refusal(file);
  EXPECT_NE(refusal(file).find("not valid JSON"), std::string::npos) << refusal(file);

  write_raw(file, R"({"__metadata__":{"format":"pt"}})", "");
  EXPECT_NE(refusal(file).find("not an importance file"), std::string::npos) << refusal(file);

  write_raw(file, "{" + meta + R"(,"x":{"dtype":"F16","shape":[2],"data_offsets":[0,4]}})",
            std::string(4, '\0'));
  EXPECT_NE(refusal(file).find(name), std::string::npos) << refusal(file);
  EXPECT_NE(refusal(file).find("tensor x: dtype must be F32"), std::string::npos) << refusal(file);

  write_raw(file, "{" + meta + R"(,"x":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})",
            std::string(8, '\0'));  // 8 bytes where 16 are promised
  EXPECT_NE(refusal(file).find("do not hold 4 floats"), std::string::npos) << refusal(file);

  ImportanceTable negative;
  negative.entries["y"] = {{1.f, -2.f}, 3};
  write_importance_file(file, negative);
  EXPECT_NE(refusal(file).find(name), std::string::npos) << refusal(file);
  EXPECT_NE(refusal(file).find("tensor y: value 1 is -2"), std::string::npos) << refusal(file);

  std::ofstream(file, std::ios::binary) << "abc";
  EXPECT_NE(refusal(file).find(name), std::string::npos) << refusal(file);
  EXPECT_NE(refusal(dir / "missing").find("missing"), std::string::npos);
}

TEST(ImportanceFile, RefusesBadSecondMomentsNamingTheField) {
  ImportanceScratch dir;
  const fs::path file = dir / "moments.safetensors";
  const std::string meta =
      R"("__metadata__": {"format": "glmrt-importance-2", "tokens": "1", "rows.moment.k": "1")";
  // Not square.
  write_raw(
      file,
      R"({"moment.k": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}, )" + meta + "}}",
      std::string(24, '\0'));
  EXPECT_NE(refusal(file).find("tensor moment.k: shape must be a square [cols, cols]"),
            std::string::npos)
      << refusal(file);
  // A weight's moments named but absent.
  write_raw(file,
            R"({"moment.k": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}, )" + meta +
                R"(, "moment_of.w": "moment.gone"}})",
            std::string(16, '\0'));
  EXPECT_NE(
      refusal(file).find("\"moment_of.w\" names \"moment.gone\", which the file does not hold"),
      std::string::npos)
      << refusal(file);
  // A well-formed one reads, its matrix only on demand; a non-finite value is refused then.
  std::string data(16, '\0');
  const float nan = std::nanf("");
  std::memcpy(data.data() + 4, &nan, 4);
  write_raw(file,
            R"({"moment.k": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}, )" + meta +
                R"(, "moment_of.w": "moment.k"}})",
            data);
  const ImportanceTable t = read_importance_file(file);
  ASSERT_NE(t.find_moments("w"), nullptr);
  EXPECT_EQ(t.find_moments("w")->cols, 2);
  try {
    t.read_moments(*t.find_moments("w"));
    ADD_FAILURE() << "a NaN in second moments was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tensor moment.k: value 1 is nan"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace glmrt
