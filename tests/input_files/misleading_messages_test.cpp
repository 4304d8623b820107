// Messages that misled: a symbolic link loop reported as a folder holding
// no model, a free-space shortfall rounded to "0.00 GB".
#include "temp_folder.h"

#include <glmrt/base/error.h>
#include <glmrt/model_files/safetensors.h>
#include <glmrt/model_maker/output_directory.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using test::TempFolder;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Messages, ASymbolicLinkLoopIsCalledOne) {
  TempFolder dir;
  fs::create_directory(dir / "model");
  fs::create_symlink("model.safetensors", dir / "model/model.safetensors");
  EXPECT_THAT(error_of([&] { TensorDirectory::open(dir / "model"); }),
              AllOf(HasSubstr("model.safetensors"), HasSubstr("symbolic links form a loop"),
                    Not(HasSubstr("holds no"))));
  fs::create_symlink("looped", dir / "looped");
  EXPECT_THAT(error_of([&] { TensorDirectory::open(dir / "looped"); }),
              HasSubstr("symbolic links form a loop"));
}

TEST(Messages, FreeSpaceShortfallShowsExactSizes) {
  TempFolder dir;
  const std::string message =
      error_of([&] { check_free_space(dir.path(), UINT64_MAX, "the model"); });
  // Rounded to GB, small sizes read 0.00; the exact byte counts never mislead.
  EXPECT_THAT(message, AllOf(HasSubstr("the model takes"), HasSubstr("18446744073709551615 bytes"),
                             HasSubstr(" bytes) free"), Not(HasSubstr("0.00 GB"))));
}

}  // namespace
}  // namespace glmrt
