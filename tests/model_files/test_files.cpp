#include "test_files.h"

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include <glmrt/base/error.h>

namespace glmrt::test {

void write_file(const std::filesystem::path& file, std::string_view bytes) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + file.string());
}

std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string safetensors_bytes(std::string_view header_json, std::string_view data) {
  std::string out(8, '\0');
  uint64_t length = header_json.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((length >> (8 * i)) & 0xff);
  out += header_json;
  out += data;
  return out;
}

std::string safetensors_file(const std::vector<TensorSpec>& tensors) {
  nlohmann::json header = nlohmann::json::object();
  header["__metadata__"] = {{"format", "pt"}};
  std::string data;
  for (const auto& t : tensors) {
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {data.size(), data.size() + t.data.size()}}};
    data += t.data;
  }
  return safetensors_bytes(header.dump(), data);
}

void expect_error(const std::function<void()>& action, std::vector<std::string> needles) {
  try {
    action();
  } catch (const glmrt::Error& e) {
    const std::string message = e.what();
    for (const auto& needle : needles) {
      EXPECT_NE(message.find(needle), std::string::npos)
          << "error message lacks \"" << needle << "\":\n  " << message;
    }
    return;
  }
  ADD_FAILURE() << "expected glmrt::Error mentioning " << ::testing::PrintToString(needles);
}

}  // namespace glmrt::test
