#include <fcntl.h>
#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/progress_bar.h>
#include <glmrt/model_maker/make_model.h>
#include <glmrt/model_maker/model_plan.h>
#include <glmrt/model_maker/output_directory.h>
#include <glmrt/model_maker/planned_file_writer.h>
#include <glmrt/model_maker/presets.h>

#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include "gguf_model_writer.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace glmrt {
namespace {

namespace fs = std::filesystem;

void check_destination(const fs::path& out, const fs::path& partial) {
  std::error_code ec;
  struct stat st {};
  if (::lstat(out.c_str(), &st) == 0 && !(S_ISDIR(st.st_mode) && fs::is_empty(out, ec)))
    fail(
        "--out {} already exists and is not an empty directory (it is {}{}): make-model writes "
        "only a new or an empty folder, and never replaces anything",
        out, describe_file_type(st.st_mode), S_ISDIR(st.st_mode) ? " holding files" : "");
  if (fs::exists(partial, ec))
    fail("{} exists: an earlier make-model was interrupted there; remove it and run again",
         partial);
}

}  // namespace

MakeModelResult make_model(const MakeModelOptions& o) {
  const auto start = std::chrono::steady_clock::now();
  if (o.out.empty()) fail("--out: no directory given");
  const nlohmann::ordered_json config = model_preset_config(o.preset, o.moe_layers, o.mtp);
  if (o.gguf) return make_gguf_model(o, config);
  const ModelPlan plan = plan_model(config, o.hot_skew, o.successor_head, o.experts);
  const fs::path out = fs::absolute(o.out).lexically_normal();
  const fs::path partial = out.string() + ".partial";
  check_destination(out, partial);
  check_free_space(out.parent_path(), plan.total_bytes(), "the model");

  PartialDirectory dir(partial);
  std::atomic<uint64_t> written{0};
  {
    ProgressBar bar("writing", plan.total_bytes());
    for (const PlannedFile& file : plan.files)
      write_planned_file(dir.path() / file.name, file, o.seed, written, bar);
    bar.finish();
  }
  write_small_file(dir.path() / "model.safetensors.index.json", plan.index().dump(2));
  // config.json last: without it the folder is not a model.
  write_small_file(dir.path() / "config.json", config.dump(2));
  dir.rename_to(out);

  MakeModelResult result;
  result.bytes = plan.total_bytes();
  result.files = static_cast<int>(plan.files.size());
  result.seconds = seconds_since(start);
  return result;
}

}  // namespace glmrt
