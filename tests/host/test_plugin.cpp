// One source for the plugins the host tests load; each build gives it one
// defect through compile definitions (see CMakeLists.txt):
//   TEST_PLUGIN_NAME      descriptor name (required)
//   TEST_ABI_MAJOR        ABI major written into the descriptor (default: the SDK's)
//   TEST_NEWER_MINOR      ABI minor one above the SDK's
//   TEST_OLDER_DRAFT_MINOR  ABI minor one below the draft contract's (with TEST_KIND draft)
//   TEST_KIND             glmrt_plugin_kind (default: kernels)
//   TEST_SUPPORTED/SCORE  what the probe reports (default: 1 / 1)
//   TEST_STRUCT_SIZE      descriptor struct_size (default: sizeof)
//   TEST_NO_ENTRY         export no glmrt_plugin_describe at all
//   TEST_DATA_ENTRY       export glmrt_plugin_describe as the descriptor itself
//                         (a data object), not a function returning it
//   TEST_PROBE_CRASHES    the probe writes through a NULL pointer (SIGSEGV)
//   TEST_PROBE_HANGS      the probe never returns
//   TEST_ESCAPE_NAME      the descriptor's name holds terminal escape sequences
//   TEST_VERSION          descriptor version text
//   TEST_CREATE_FAILS     create() refuses with a message (the probe still passes)
//   TEST_ABI_1_2          ABI minor 2, built against the frozen 1.2 kernels.h
//                         (tests/host/abi_1_2): a table without grouped_matmul
// When it is a kernels plugin it creates a small f32-only Kernels, refusing
// any settings, so the tests can see a created object work and a refusal.
#include <glmrt/plugin/plugin.h>

#include <cstdio>
#include <cstring>

#include <unistd.h>

#ifndef TEST_ABI_MAJOR
#define TEST_ABI_MAJOR GLMRT_ABI_MAJOR
#endif
#if defined(TEST_ABI_1_2)
#define TEST_ABI_MINOR 2
#elif defined(TEST_NEWER_MINOR)
#define TEST_ABI_MINOR (GLMRT_ABI_MINOR + 1)
#elif defined(TEST_OLDER_DRAFT_MINOR)
#define TEST_ABI_MINOR (GLMRT_ABI_MINOR_DRAFT - 1)
#else
#define TEST_ABI_MINOR GLMRT_ABI_MINOR
#endif
#ifndef TEST_KIND
#define TEST_KIND GLMRT_PLUGIN_KERNELS
#endif
#ifndef TEST_SUPPORTED
#define TEST_SUPPORTED 1
#endif
#ifndef TEST_SCORE
#define TEST_SCORE 1
#endif
#ifndef TEST_STRUCT_SIZE
#define TEST_STRUCT_SIZE sizeof(glmrt_plugin_descriptor)
#endif
#ifndef TEST_VERSION
#define TEST_VERSION "0.0.1"
#endif
#ifdef TEST_ESCAPE_NAME
#define TEST_DESCRIPTOR_NAME TEST_PLUGIN_NAME "\x1b[31m\x1b]0;pwned\x07"
#else
#define TEST_DESCRIPTOR_NAME TEST_PLUGIN_NAME
#endif

namespace {

class F32Kernels final : public glmrt::plugin::Kernels {
 public:
  bool supports(const glmrt_weight_format& format) const noexcept override {
    return format.element_type == GLMRT_F32 && format.packing == 0;
  }
  glmrt_status matmul(const float* x, int64_t S, const glmrt_weight_view& w,
                      float* y) noexcept override {
    if (!supports(w.format)) {
      std::snprintf(error_, sizeof(error_), "%s supports f32 only", TEST_PLUGIN_NAME);
      return GLMRT_ERR_UNSUPPORTED;
    }
    for (int64_t o = 0; o < w.rows; ++o) {
      const auto* row =
          reinterpret_cast<const float*>(static_cast<const char*>(w.data) + o * w.row_stride_bytes);
      for (int64_t s = 0; s < S; ++s) {
        float sum = 0;
        for (int64_t i = 0; i < w.cols; ++i) sum += x[s * w.cols + i] * row[i];
        y[s * w.rows + o] = sum;
      }
    }
    return GLMRT_OK;
  }
  const char* last_error() const noexcept override { return error_; }
  void destroy() noexcept override { delete this; }

 private:
  char error_[128] = {};
};

void probe(glmrt_probe_result* out) {
#ifdef TEST_PROBE_CRASHES
  volatile int* volatile nowhere = nullptr;
  *nowhere = 1;
#endif
#ifdef TEST_PROBE_HANGS
  for (;;) ::pause();
#endif
  out->supported = TEST_SUPPORTED;
  out->score = TEST_SCORE;
  std::snprintf(out->reason, sizeof(out->reason), "%s",
                TEST_SUPPORTED ? "test plugin" : "needs the imaginary XQZ-512 instructions");
}

void* create(const glmrt_host_services*, const glmrt_setting* settings, size_t n_settings,
             char* error, size_t error_len) {
  if (n_settings > 0) {
    std::snprintf(error, error_len, "%s takes no settings; unknown setting `%s`", TEST_PLUGIN_NAME,
                  settings[0].key);
    return nullptr;
  }
#ifdef TEST_CREATE_FAILS
  std::snprintf(error, error_len, "%s: the imaginary XQZ device is busy", TEST_PLUGIN_NAME);
  return nullptr;
#endif
  if (TEST_KIND != GLMRT_PLUGIN_KERNELS) {
    std::snprintf(error, error_len, "%s creates kernels only", TEST_PLUGIN_NAME);
    return nullptr;
  }
  return static_cast<glmrt::plugin::Kernels*>(new F32Kernels);
}

const glmrt_plugin_descriptor kDescriptor = {
    static_cast<uint32_t>(TEST_STRUCT_SIZE),
    TEST_ABI_MAJOR,
    TEST_ABI_MINOR,
    TEST_KIND,
    TEST_DESCRIPTOR_NAME,
    TEST_VERSION,
    "a plugin built for the host tests",
    &probe,
    &create,
};

}  // namespace

#if defined(TEST_DATA_ENTRY)
// The symbol is the descriptor itself: a host calling it jumps into data.
GLMRT_PLUGIN_EXPORT const glmrt_plugin_descriptor glmrt_plugin_describe = kDescriptor;
#elif defined(TEST_NO_ENTRY)
// A valid shared object that is not a glmrt plugin.
GLMRT_PLUGIN_EXPORT const glmrt_plugin_descriptor* some_other_entry(void) {
  return &kDescriptor;
}
#else
GLMRT_PLUGIN_EXPORT const glmrt_plugin_descriptor* glmrt_plugin_describe(void) {
  return &kDescriptor;
}
#endif
