#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/progress_bar.h>
#include <glmrt/base/warning.h>
#include <glmrt/calibrate/importance_file.h>
#include <glmrt/convert/convert.h>
#include <glmrt/convert/convert_recipe.h>
#include <glmrt/convert/converted_file_writer.h>
#include <glmrt/convert/streamed_file_writer.h>
#include <glmrt/model_files/model_config.h>
#include <glmrt/model_maker/output_directory.h>
#include <xxhash.h>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>

#include <glmrt/model_files/file_io.h>
#include "conversion_state.h"
#include "convert_destination.h"
#include "gptq_factor_cache.h"
#include "source_checks.h"
#include "source_checksum.h"

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using nlohmann::ordered_json;

ordered_json read_config(const fs::path& from) {
  const fs::path file = from / "config.json";
  try {
    return ordered_json::parse(read_input_file(file, input_kinds::model_config));
  } catch (const ordered_json::exception& e) {
    fail("{}: not valid JSON: {}", file, e.what());
  }
}

// What the output depends on besides the source bytes (each finished file
// records the checksum of its own, see source_checksum.h): every planned
// header (names, formats, shapes, offsets), the statistics and the
// quantizer's version.
uint64_t plan_fingerprint(const ConversionPlan& plan, const ConvertOptions& o, QuantMethod method) {
  std::string text = "glmrt-convert-2\n";
  for (const auto& f : plan.layout.files) text += f.name + "\n" + f.header() + "\n";
  if (!o.importance.empty()) {
    // The statistics' contents, not only their name: new statistics under an
    // old name must not resume files weighted by the old ones. Hashed in
    // pieces: second moments make the file GBs.
    const int fd = model_files::open_read_only(o.importance);
    struct Closer {
      int fd;
      ~Closer() { model_files::close_fd(fd); }
    } closer{fd};
    const uint64_t size = model_files::file_size(fd, o.importance);
    std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                   &XXH3_freeState);
    XXH3_64bits_reset(state.get());
    std::vector<std::byte> chunk(8u << 20);
    for (uint64_t at = 0; at < size; at += chunk.size()) {
      const auto part = std::span(chunk).first(std::min<uint64_t>(chunk.size(), size - at));
      model_files::pread_exact(fd, at, part, o.importance, "the statistics");
      XXH3_64bits_update(state.get(), part.data(), part.size());
    }
    text += fmt::format("importance {} {:016x}\n", o.importance.string(),
                        XXH3_64bits_digest(state.get()));
  }
  // rtn's files are those of the format before --method existed.
  if (method == QuantMethod::gptq)
    text += fmt::format("gptq damping {} scales {} min-rows {}\n", o.gptq_damping,
                        o.gptq_scales == GptqScales::before ? "before" : "during",
                        o.gptq_min_rows_per_col);
  return XXH3_64bits(text.data(), text.size());
}

// The method run: as asked, or gptq when the statistics hold second moments.
QuantMethod method_to_run(const ConvertOptions& o, const ImportanceTable& importance) {
  if (o.method == QuantMethod::rtn) return QuantMethod::rtn;
  if (o.importance.empty()) {
    if (o.method == QuantMethod::gptq)
      fail(
          "--method gptq: needs --importance STATS with second moments (written by `glmrt "
          "calibrate`)");
    return QuantMethod::rtn;
  }
  if (importance.moments.empty()) {
    note(
        "--importance {}: the statistics hold no second moments (an older `glmrt calibrate`, or "
        "--moments-max-cols 0): rounding by rtn, the importance-weighted scale search",
        o.importance);
    return QuantMethod::rtn;
  }
  return QuantMethod::gptq;
}

// Which finished files of an earlier run stay: their bytes and their
// sources' bytes still hash as recorded (both read back: a source rewritten
// with the same size and time is converted again).
std::vector<bool> files_to_keep(const ConversionPlan& plan, const TensorDirectory& dir,
                                ConversionState& state) {
  uint64_t total = 0;
  for (size_t k = 0; k < plan.layout.files.size(); ++k)
    if (state.recorded(plan.layout.files[k].name))
      for (const ConvertedPart& p : plan.parts[k])
        if (p.kind != ConvertedPart::Kind::scales)
          total += p.source->byte_size + (p.block_scales ? p.block_scales->byte_size : 0);
  std::vector<bool> keep(plan.layout.files.size());
  if (total == 0) return keep;
  ProgressBar bar("checking the finished files' sources", total);
  uint64_t done = 0;
  for (size_t k = 0; k < plan.layout.files.size(); ++k) {
    const PlannedFile& f = plan.layout.files[k];
    keep[k] = state.still_valid(f.name, f.file_bytes(), [&] {
      return source_checksum(plan.parts[k], dir, [&](uint64_t n) { bar.update(done += n); });
    });
  }
  bar.finish();
  return keep;
}

}  // namespace

std::string conversion_summary(const ConversionPlan& plan) {
  std::string s = fmt::format("{:<14}{:>8}{:>16}{:>12}{:>10}\n", "class", "tensors", "parameters",
                              "GB", "bits/w");
  RoleTotals all;
  for (const auto& [role, t] : plan.totals) {
    if (role == TensorRole::dropped || role == TensorRole::block_scales) {
      s += fmt::format("{:<14}{:>8}  (not written)\n", role_name(role), t.tensors);
      continue;
    }
    s += fmt::format("{:<14}{:>8}{:>16}{:>12.3f}{:>10.3f}\n", role_name(role), t.tensors, t.params,
                     t.bytes / 1e9, t.bits_per_weight());
    // A class stored at several precisions (a recipe, --override): each one.
    const auto first = plan.format_totals.lower_bound({role, std::string()});
    auto end = first;
    while (end != plan.format_totals.end() && end->first.first == role) ++end;
    if (std::distance(first, end) > 1)
      for (auto it = first; it != end; ++it)
        s += fmt::format("  {:<12}{:>8}{:>16}{:>12.3f}{:>10.3f}\n", it->first.second,
                         it->second.tensors, it->second.params, it->second.bytes / 1e9,
                         it->second.bits_per_weight());
    all.tensors += t.tensors;
    all.params += t.params;
    all.bytes += t.bytes;
  }
  s += fmt::format("{:<14}{:>8}{:>16}{:>12.3f}{:>10.3f}\n", "total", all.tensors, all.params,
                   all.bytes / 1e9, all.bits_per_weight());
  s += fmt::format("{} files, {:.3f} GB with headers; {:.3f} GB read from the checkpoint\n",
                   plan.layout.files.size(), plan.layout.total_bytes() / 1e9,
                   plan.source_bytes / 1e9);
  return s;
}

ConvertResult convert_checkpoint(const ConvertOptions& given, int stop_after_files) {
  const auto start = std::chrono::steady_clock::now();
  if (given.from.empty()) fail("--from: no checkpoint folder given");
  if (is_gguf_model(given.from))
    fail(
        "--from {}: a GGUF model; convert reads Hugging Face checkpoints (config.json + "
        "safetensors). Run the GGUF as it is: --model {}",
        given.from, given.from);
  const TensorDirectory dir = TensorDirectory::open(given.from);
  ordered_json config = read_config(given.from);
  const std::array<int64_t, 2> fp8_block = fp8_block_of(config, given.from);
  const ModelConfig model = load_model_config(given.from, dir, QuantizationConfig::accepted);
  ConvertOptions o = given;
  if (!o.recipe.empty()) apply_convert_recipe(find_convert_recipe(o.recipe), model, o);
  ConvertResult result;
  result.plan = plan_conversion(dir, o, model.num_hidden_layers, fp8_block);
  const ConversionPlan& plan = result.plan;
  check_convertible(plan, model, o, dir);
  check_carried_files(o.from);
  if (o.dry_run) return result;
  // Read (and checked) before anything is written.
  const ImportanceTable importance =
      o.importance.empty() ? ImportanceTable{} : read_importance_file(o.importance);
  for (const auto& parts : plan.parts)
    for (const ConvertedPart& p : parts) {
      const auto a = importance.find(p.source->name);
      if (p.kind == ConvertedPart::Kind::values && !a.empty() &&
          static_cast<int64_t>(a.size()) != p.source->shape.back())
        fail(
            "--importance {}: {} holds {} values, the matrix has {} columns (statistics of "
            "another model?)",
            o.importance, p.source->name, a.size(), p.source->shape.back());
    }
  const auto importance_of = [&](const std::string& name) { return importance.find(name); };
  if (!(o.gptq_damping >= 0.0 && o.gptq_damping <= 1.0))
    fail("--gptq-damping {}: must be a fraction of the mean diagonal from 0 to 1", o.gptq_damping);
  if (!(o.gptq_min_rows_per_col >= 0.0))
    fail("--gptq-min-rows {}: must be 0 or more", o.gptq_min_rows_per_col);
  result.method = method_to_run(o, importance);
  GptqFactorCache factors(importance, o.gptq_damping, o.gptq_min_rows_per_col);
  MatrixRounding rounding;
  if (!o.importance.empty()) rounding.importance = importance_of;
  if (result.method == QuantMethod::gptq)
    rounding.gptq = [&](const std::string& name) { return factors.find(name); };
  rounding.gptq_scales = o.gptq_scales;
  if (o.to.empty()) fail("--to: no output folder given");

  const fs::path out = resolved_output(o.to);
  const fs::path partial_path = out.string() + ".partial";
  check_apart_from_source(o, dir, out, partial_path);
  check_replaceable_output(out, o.force);
  const uint64_t fingerprint = plan_fingerprint(plan, o, result.method);
  std::error_code ec;
  const bool partial_existed = fs::exists(fs::symlink_status(partial_path, ec));
  ConversionState state = ConversionState::resume(partial_path, fingerprint, o.force);
  // Resumable: an interrupted run leaves it for the next one, once it holds
  // a finished file; a refusal before that (no space) leaves nothing.
  PartialDirectory partial(partial_path);
  if (partial_existed) partial.keep();

  const std::vector<bool> reuse = files_to_keep(plan, dir, state);
  uint64_t to_write = 0, to_read = 0;
  for (size_t k = 0; k < plan.layout.files.size(); ++k) {
    const PlannedFile& f = plan.layout.files[k];
    if (!reuse[k]) {
      to_write += f.file_bytes();
      for (const auto& p : plan.parts[k])
        if (p.kind != ConvertedPart::Kind::scales)
          to_read += p.source->byte_size + (p.block_scales ? p.block_scales->byte_size : 0);
    }
  }
  state.remove_unfinished_files();
  check_free_space(partial_path, to_write, "the converted model");

  std::atomic<uint64_t> consumed{0};
  {
    ProgressBar bar("converting", to_read);
    for (size_t k = 0; k < plan.layout.files.size(); ++k) {
      const PlannedFile& f = plan.layout.files[k];
      if (reuse[k]) {
        ++result.files_reused;
        continue;
      }
      if (stop_after_files > 0 && result.files_written >= stop_after_files)
        fail("stopped after {} files, as asked (--stop-after); run again to resume",
             result.files_written);
      const ConvertedFileChecksums sums = write_converted_file(
          partial_path / f.name, f, plan.parts[k], dir, plan.fp8_block,
          [&](uint64_t n) { bar.update(consumed += n); }, rounding);
      state.finished(f.name, f.file_bytes(), sums.file, sums.source);
      partial.keep();
      ++result.files_written;
      result.bytes_written += f.file_bytes();
    }
    bar.finish();
  }

  // The small files, config.json last: without it the folder is no model.
  std::vector<std::string> written;
  for (const PlannedFile& f : plan.layout.files) written.push_back(f.name);
  const auto put = [&](const std::string& name, const std::string& text) {
    std::error_code ec;
    fs::remove(partial_path / name, ec);  // left by an interrupted run
    write_small_file(partial_path / name, text);
    written.push_back(name);
  };
  put("model.safetensors.index.json", plan.layout.index().dump(2));
  for (const char* name : kCarriedFiles)  // checked by check_carried_files; a link never skipped
    if (fs::exists(fs::symlink_status(o.from / name)))
      put(name, model_files::read_whole_file(o.from / name));
  put(kChecksumsFile, state.checksums().dump(2));
  config.erase("quantization_config");
  if (o.drop_mtp) config["num_nextn_predict_layers"] = 0;
  put("config.json", config.dump(2));
  put(kContainerMarkerFile, container_marker(written));
  // Checked again: the folder may have changed while the conversion ran.
  check_replaceable_output(out, o.force);
  remove_replaced_output(out);
  state.remove_state_file();
  partial.rename_to(out);
  result.source_bytes = consumed.load();
  result.gptq_matrices = factors.matrices_gptq();
  result.gptq_shared_matrices = factors.matrices_shared();
  result.rtn_matrices = factors.matrices_rtn();
  result.gptq_factors = factors.factors_computed();
  result.gptq_factor_seconds = factors.factor_seconds();
  result.seconds = seconds_since(start);
  return result;
}

}  // namespace glmrt
