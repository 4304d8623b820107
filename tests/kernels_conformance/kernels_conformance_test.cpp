// Runs the core's kernels conformance checks (glmrt/conformance) on every
// kernels plugin: one test per plugin and weight format, plus interface,
// settings and thread-count tests per plugin.
#include <glmrt/base/error.h>
#include <glmrt/conformance/kernels_conformance.h>
#include <glmrt/host/plugin_host.h>
#include <glmrt/weights/kernels_backend.h>

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::conformance {
namespace {

namespace fs = std::filesystem;

struct KernelsPlugin {
  fs::path file;
  std::string name;  // a test-name-safe label
};

std::string label_of(const fs::path& file) {
  std::string label = file.stem().string();
  if (label.starts_with("libglmrt-")) label = label.substr(9);
  for (char& ch : label)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return label;
}

/// In-tree kernels plugins, then the files named in $GLMRT_CONFORMANCE_PLUGINS.
std::vector<KernelsPlugin> kernels_plugins() {
  std::vector<fs::path> files;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(fs::path(GLMRT_BUILD_DIR) / "plugins", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("libglmrt-kernels-") && name.ends_with(".so"))
      files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  if (const char* extra = std::getenv("GLMRT_CONFORMANCE_PLUGINS")) {
    std::string_view list = extra;
    while (!list.empty()) {
      const size_t colon = list.find(':');
      if (colon != 0) files.emplace_back(std::string(list.substr(0, colon)));
      list = colon == std::string_view::npos ? std::string_view() : list.substr(colon + 1);
    }
  }
  std::vector<KernelsPlugin> plugins;
  for (const fs::path& file : files) plugins.push_back({file, label_of(file)});
  return plugins;
}

/// Skips the current test when the plugin cannot run on this CPU.
#define SKIP_UNLESS_SUPPORTED(file)                                                             \
  do {                                                                                          \
    const PluginInfo info = PluginHost(std::vector<fs::path>{}).inspect(file);                  \
    if (!info.supported)                                                                        \
      GTEST_SKIP() << "plugin `" << info.name << "` does not run on this CPU: " << info.reason; \
  } while (false)

struct MatmulParam {
  KernelsPlugin plugin;
  WeightFormatSpec format;
};

void PrintTo(const KernelsPlugin& plugin, std::ostream* out) {
  *out << plugin.file.string();
}
void PrintTo(const MatmulParam& param, std::ostream* out) {
  *out << param.plugin.file.string() << " " << param.format.name();
}

std::vector<MatmulParam> matmul_params() {
  std::vector<MatmulParam> params;
  for (const KernelsPlugin& plugin : kernels_plugins())
    for (const WeightFormatSpec& format : conformance_formats()) params.push_back({plugin, format});
  return params;
}

class KernelsMatmul : public testing::TestWithParam<MatmulParam> {};

TEST_P(KernelsMatmul, MatchesFloat64Reference) {
  const MatmulParam& param = GetParam();
  SKIP_UNLESS_SUPPORTED(param.plugin.file);
  const PluginHost host(std::vector<fs::path>{});
  MemoryBudget budget;
  HostServices services(budget, 2);
  PluginHandle<plugin::Kernels> kernels =
      host.create_kernels(PluginChoice{param.plugin.file.string(), {}, {}}, services);
  const std::vector<MatmulCase> cases = conformance_cases(param.format);
  size_t skipped = 0;
  for (const MatmulCase& c : cases) {
    const CheckResult result = check_matmul_case(*kernels, c);
    if (result.outcome == Outcome::kFail) ADD_FAILURE() << result.name << ": " << result.detail;
    if (result.outcome == Outcome::kSkip) ++skipped;
  }
  if (skipped == cases.size())
    GTEST_SKIP() << param.plugin.name << " declines " << param.format.name()
                 << " (supports() = false)";
}

TEST_P(KernelsMatmul, RowsDoNotDependOnTheOtherRowsOfTheCall) {
  const MatmulParam& param = GetParam();
  SKIP_UNLESS_SUPPORTED(param.plugin.file);
  const PluginHost host(std::vector<fs::path>{});
  MemoryBudget budget;
  HostServices services(budget, 2);
  PluginHandle<plugin::Kernels> kernels =
      host.create_kernels(PluginChoice{param.plugin.file.string(), {}, {}}, services);
  const CheckResult result = check_batch_invariance(*kernels, param.format);
  if (result.outcome == Outcome::kSkip) GTEST_SKIP() << result.detail;
  EXPECT_EQ(result.outcome, Outcome::kPass) << result.name << ": " << result.detail;
}

INSTANTIATE_TEST_SUITE_P(Plugins, KernelsMatmul, testing::ValuesIn(matmul_params()),
                         [](const testing::TestParamInfo<MatmulParam>& info) {
                           std::string format = info.param.format.name();
                           for (char& ch : format)
                             if (ch == '-') ch = '_';
                           return info.param.plugin.name + "__" + format;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(KernelsMatmul);

class KernelsPluginTest : public testing::TestWithParam<KernelsPlugin> {};

TEST_P(KernelsPluginTest, RefusesBadInput) {
  SKIP_UNLESS_SUPPORTED(GetParam().file);
  const PluginHost host(std::vector<fs::path>{});
  MemoryBudget budget;
  HostServices services(budget, 2);
  PluginHandle<plugin::Kernels> kernels =
      host.create_kernels(PluginChoice{GetParam().file.string(), {}, {}}, services);
  for (const CheckResult& result : check_kernels_interface(*kernels).results())
    EXPECT_NE(result.outcome, Outcome::kFail) << result.name << ": " << result.detail;
}

TEST_P(KernelsPluginTest, RejectsUnknownSettings) {
  SKIP_UNLESS_SUPPORTED(GetParam().file);
  const PluginHost host(std::vector<fs::path>{});
  MemoryBudget budget;
  HostServices services(budget, 1);
  PluginChoice choice{GetParam().file.string(), {{"no_such_setting", "1"}}, {}};
  try {
    host.create_kernels(choice, services);
    FAIL() << "create() accepted the setting `no_such_setting`";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_setting"), std::string::npos) << e.what();
  }
}

TEST_P(KernelsPluginTest, AnyThreadCountGivesConformingResults) {
  SKIP_UNLESS_SUPPORTED(GetParam().file);
  const PluginHost host(std::vector<fs::path>{});
  for (int threads : {1, 3, 4}) {
    MemoryBudget budget;
    HostServices services(budget, threads);
    PluginHandle<plugin::Kernels> kernels =
        host.create_kernels(PluginChoice{GetParam().file.string(), {}, {}}, services);
    for (const WeightFormatSpec& format : conformance_formats()) {
      // O not a multiple of any tile height, S not of any tile width.
      const MatmulCase c{format, 7, 157, format.fit_inputs(700), ActivationKind::kExactInt8,
                         false,  99};
      const CheckResult result = check_matmul_case(*kernels, c);
      EXPECT_NE(result.outcome, Outcome::kFail)
          << threads << " threads, " << result.name << ": " << result.detail;
    }
  }
}

// Grouped calls (a step's experts in one call), with more than one thread:
// every product bit for bit what matmul() gives it alone, also when S = 1
// and S = 2 products run side by side (kernels-avx2's dequantizing path
// once shared scratch rows between those two tile shapes: its int2-k16
// experts' results moved with how a step's products were grouped).
TEST_P(KernelsPluginTest, GroupedCallsGiveWhatMatmulGivesAlone) {
  SKIP_UNLESS_SUPPORTED(GetParam().file);
  const PluginHost host(std::vector<fs::path>{});
  for (int threads : {2, 3}) {
    MemoryBudget budget;
    HostServices services(budget, threads);
    PluginHandle<plugin::Kernels> kernels =
        host.create_kernels(PluginChoice{GetParam().file.string(), {}, {}}, services);
    const int minor = host.inspect(GetParam().file).abi_minor;
    for (const CheckResult& result : {check_grouped_matmul(*kernels, minor),
                                      check_grouped_matmul_side_by_side(*kernels, minor)})
      EXPECT_NE(result.outcome, Outcome::kFail)
          << threads << " threads, " << result.name << ": " << result.detail;
  }
}

// ABI 1.7: resident rows packed by the plugin multiply bit for bit as they
// did stored; kernels-avx2 offers it for q4_0 (and q4_k, q6_k with int8x2)
// where it runs its AVX-VNNI kernels, and `pack: off` withdraws it.
TEST_P(KernelsPluginTest, PackedRowsGiveTheProductsOfTheRowsAsStored) {
  SKIP_UNLESS_SUPPORTED(GetParam().file);
  const PluginHost host(std::vector<fs::path>{});
  const PluginInfo info = host.inspect(GetParam().file);
  // Its probe's note says which dots it runs.
  const bool packs =
      GetParam().name == "kernels_avx2" && info.reason.find("vpdpbusd") != std::string::npos;
  for (const char* activations : {"int8", "int8x2"})
    for (int threads : {1, 2}) {
      MemoryBudget budget;
      HostServices services(budget, threads);
      const bool avx2 = GetParam().name == "kernels_avx2";
      PluginChoice choice{GetParam().file.string(), {}, {}};
      if (avx2) choice.settings["activations"] = activations;
      PluginHandle<plugin::Kernels> kernels = host.create_kernels(choice, services);
      const CheckResult result = check_row_packing(*kernels, info.abi_minor);
      EXPECT_NE(result.outcome, Outcome::kFail)
          << activations << ", " << threads << " threads: " << result.detail;
      if (packs) {
        EXPECT_EQ(result.outcome, Outcome::kPass) << result.detail;
      }
      if (avx2) {
        // With AVX-512 VNNI, `auto` meets two packed groups per zmm; `off`
        // keeps one per ymm: both must give the stored rows' bits.
        choice.settings["avx512"] = "off";
        PluginHandle<plugin::Kernels> narrow = host.create_kernels(choice, services);
        EXPECT_NE(check_row_packing(*narrow, info.abi_minor).outcome, Outcome::kFail)
            << activations << ", " << threads << " threads, avx512: off";
        choice.settings["pack"] = "off";
        PluginHandle<plugin::Kernels> plain = host.create_kernels(choice, services);
        EXPECT_EQ(check_row_packing(*plain, info.abi_minor).outcome, Outcome::kSkip);
      }
    }
}

// ABI 1.8: a product marked as the step's logits may take other rounding
// (kernels-avx2's `logits: int8` under int8x2: one int8 pass), never more
// than the tolerance; bits the SDK does not define change nothing.
TEST_P(KernelsPluginTest, TheLogitsHintKeepsTheTolerance) {
  SKIP_UNLESS_SUPPORTED(GetParam().file);
  const PluginHost host(std::vector<fs::path>{});
  if (host.inspect(GetParam().file).abi_minor < GLMRT_ABI_MINOR_PRODUCT_HINTS)
    GTEST_SKIP() << "ABI older than 1.8: the host never hints";
  MemoryBudget budget;
  HostServices services(budget, 2);
  PluginChoice choice{GetParam().file.string(), {}, {}};
  if (GetParam().name == "kernels_avx2") {
    choice.settings["activations"] = "int8x2";
    choice.settings["logits"] = "int8";
  }
  PluginHandle<plugin::Kernels> kernels = host.create_kernels(choice, services);
  int checked = 0;
  for (const WeightFormatSpec& format : conformance_formats()) {
    const std::vector<MatmulCase> cases = conformance_cases(format);
    for (size_t k = 0; k < cases.size(); k += 5) {
      const CheckResult result = check_matmul_case(*kernels, cases[k], GLMRT_PRODUCT_LOGITS);
      EXPECT_NE(result.outcome, Outcome::kFail) << result.name << ": " << result.detail;
      checked += result.outcome == Outcome::kPass;
    }
  }
  EXPECT_GT(checked, 0);
  // Q8_0 rows (a block: an f16 scale, 32 int8 codes) of 256 inputs, S = 1.
  constexpr int64_t O = 16, I = 256, kBlockBytes = 34;
  std::vector<uint8_t> rows(static_cast<size_t>(O * I / 32 * kBlockBytes));
  for (size_t b = 0; b < rows.size(); b += kBlockBytes) {
    rows[b] = 0x00, rows[b + 1] = 0x3c;  // 1.0
    for (size_t k = 2; k < kBlockBytes; ++k) rows[b + k] = static_cast<uint8_t>(b * 7 + k * 13);
  }
  glmrt_weight_view view{};
  view.format = WeightFormatSpec{plugin::ggml_element_type(GLMRT_GGML_Q8_0), 0}.to_format(1);
  view.data = rows.data();
  view.rows = O;
  view.cols = I;
  view.row_stride_bytes = I / 32 * kBlockBytes;
  if (!kernels->supports(view.format)) return;
  std::vector<float> x(I), plain(O), unknown(O);
  for (int64_t i = 0; i < I; ++i)
    x[static_cast<size_t>(i)] = std::sin(0.37f * static_cast<float>(i));
  ASSERT_EQ(kernels->matmul(x.data(), 1, view, plain.data()), GLMRT_OK);
  ASSERT_EQ(kernels->matmul_hinted(x.data(), 1, view, unknown.data(), 1u << 31), GLMRT_OK);
  EXPECT_EQ(std::memcmp(plain.data(), unknown.data(), plain.size() * sizeof(float)), 0);
}

INSTANTIATE_TEST_SUITE_P(Plugins, KernelsPluginTest, testing::ValuesIn(kernels_plugins()),
                         [](const testing::TestParamInfo<KernelsPlugin>& info) {
                           return info.param.name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(KernelsPluginTest);

TEST(KernelsConformance, FindsTheInTreePlugins) {
  std::vector<std::string> names;
  for (const KernelsPlugin& plugin : kernels_plugins()) names.push_back(plugin.name);
  for (const char* expected : {"kernels_scalar", "kernels_avx2"})
    EXPECT_NE(std::find(names.begin(), names.end(), expected), names.end())
        << expected << " was not found in " << GLMRT_BUILD_DIR << "/plugins";
}

/// kernels-scalar with its matmul output altered after the fact: what the
/// suite's own tests feed it to show it can fail.
class AlteredKernels final : public plugin::Kernels {
 public:
  using Alter =
      std::function<void(const float* x, int64_t S, const glmrt_weight_view& w, float* y)>;
  explicit AlteredKernels(Alter alter)
      : services_(budget_, 1),
        inner_(host_.create_kernels(
            PluginChoice{
                (fs::path(GLMRT_BUILD_DIR) / "plugins" / "libglmrt-kernels-scalar.so").string(),
                {},
                {}},
            services_)),
        alter_(std::move(alter)) {}
  plugin::Kernels& unaltered() { return *inner_; }
  bool supports(const glmrt_weight_format& f) const noexcept override {
    return inner_->supports(f);
  }
  glmrt_status matmul(const float* x, int64_t S, const glmrt_weight_view& w,
                      float* y) noexcept override {
    const glmrt_status status = inner_->matmul(x, S, w, y);
    alter_(x, S, w, y);
    return status;
  }
  const char* last_error() const noexcept override { return inner_->last_error(); }
  void destroy() noexcept override {}

 private:
  const PluginHost host_{std::vector<fs::path>{}};
  MemoryBudget budget_;
  HostServices services_;
  PluginHandle<plugin::Kernels> inner_;
  Alter alter_;
};

TEST(KernelsConformance, BatchInvarianceCatchesARowThatFollowsS) {
  // A kernel whose first output moves by one ulp once a call has more than 4 rows.
  AlteredKernels wrong([](const float*, int64_t S, const glmrt_weight_view&, float* y) {
    if (S > 4) y[0] = std::nextafter(y[0], 1e30f);
  });
  const WeightFormatSpec int4{GLMRT_I4, 0};
  EXPECT_EQ(check_batch_invariance(wrong.unaltered(), int4).outcome, Outcome::kPass);
  const CheckResult result = check_batch_invariance(wrong, int4);
  EXPECT_EQ(result.outcome, Outcome::kFail) << result.detail;
  EXPECT_NE(result.detail.find("S=5"), std::string::npos) << result.detail;
}

TEST(KernelsConformance, GgmlCasesCatchAnOutputOffByOnePercent) {
  // Exact-int8 activations hold ggml blocks to the float-rounding tolerance.
  AlteredKernels wrong([](const float*, int64_t, const glmrt_weight_view&, float* y) {
    y[0] += 1e-2f * std::abs(y[0]) + 1e-3f;
  });
  const WeightFormatSpec q4_k{plugin::ggml_element_type(GLMRT_GGML_Q4_K), 0};
  const MatmulCase c{q4_k, 3, 5, 512, ActivationKind::kExactInt8, false, 11};
  EXPECT_EQ(check_matmul_case(wrong.unaltered(), c).outcome, Outcome::kPass);
  const CheckResult result = check_matmul_case(wrong, c);
  EXPECT_EQ(result.outcome, Outcome::kFail) << result.detail;
}

/// Says yes to everything and counts the questions.
class YesKernels final : public plugin::Kernels {
 public:
  bool supports(const glmrt_weight_format&) const noexcept override {
    ++asked;
    return true;
  }
  glmrt_status matmul(const float*, int64_t, const glmrt_weight_view&, float*) noexcept override {
    return GLMRT_OK;
  }
  const char* last_error() const noexcept override { return ""; }
  void destroy() noexcept override {}
  mutable int asked = 0;
};

TEST(KernelsConformance, TheHostNeverAsksAPluginOlderThanAbi15AboutGgmlTypes) {
  glmrt_weight_format q4_k =
      WeightFormatSpec{plugin::ggml_element_type(GLMRT_GGML_Q4_K), 0}.to_format(1);
  YesKernels old_plugin, new_plugin;
  EXPECT_FALSE(KernelsBackend(old_plugin, GLMRT_ABI_MINOR_GGML_TYPES - 1, "old").supports(q4_k));
  EXPECT_EQ(old_plugin.asked, 0);
  EXPECT_TRUE(KernelsBackend(new_plugin, GLMRT_ABI_MINOR_GGML_TYPES, "new").supports(q4_k));
  EXPECT_EQ(new_plugin.asked, 1);
  // Formats of older minors are still asked of the old plugin.
  EXPECT_TRUE(
      KernelsBackend(old_plugin, 4, "old").supports(WeightFormatSpec{GLMRT_I4, 64}.to_format(1)));
  EXPECT_EQ(old_plugin.asked, 1);
}

TEST(KernelsConformance, ExactActivationCasesCatchAWrongWeight) {
  // The suite must be able to fail: a reference off by one weight code in one
  // output is outside the exact-activation tolerance.
  const MatmulCase c{{GLMRT_I4, 0}, 1, 1, 64, ActivationKind::kExactInt8, false, 5};
  // As if the last input's weight code were one larger.
  AlteredKernels wrong([](const float* x, int64_t, const glmrt_weight_view& w, float* y) {
    y[0] += x[w.cols - 1] * w.scales[0];
  });
  EXPECT_EQ(check_matmul_case(wrong.unaltered(), c).outcome, Outcome::kPass);
  // x[I-1] may be 0 in the ternary activations; pick a case where it is not.
  CheckResult result = check_matmul_case(wrong, c);
  for (uint64_t seed = 6; result.outcome == Outcome::kPass && seed < 20; ++seed) {
    MatmulCase other = c;
    other.seed = seed;
    result = check_matmul_case(wrong, other);
  }
  EXPECT_EQ(result.outcome, Outcome::kFail) << result.detail;
}

}  // namespace
}  // namespace glmrt::conformance
