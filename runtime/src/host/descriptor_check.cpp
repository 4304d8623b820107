#include "descriptor_check.h"

#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <optional>
#include <string_view>

namespace glmrt {
namespace {

// Bytes of the descriptor that hold struct_size and the ABI version: enough
// to tell a plugin of another major apart before trusting the rest.
constexpr uint32_t kDescriptorVersionBytes = offsetof(glmrt_plugin_descriptor, kind);
constexpr size_t kMaxNameBytes = 128;
constexpr size_t kMaxVersionBytes = 128;
constexpr size_t kMaxDescriptionBytes = 4096;

struct SegmentSearch {
  uintptr_t address = 0;
  ElfW(Word) flags = 0;
  std::optional<size_t> bytes_after;
};

/// The bytes from `address` to the end of the loaded segment (a PT_LOAD of
/// any object the loader mapped) holding it, when that segment has `flags`
/// (PF_R for data, PF_X for code); nullopt when none does. Only memory found
/// so is read or called: a stray pointer is refused instead of followed.
std::optional<size_t> mapped_bytes_after(const void* address, ElfW(Word) flags) {
  SegmentSearch search{reinterpret_cast<uintptr_t>(address), flags, std::nullopt};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto& s = *static_cast<SegmentSearch*>(data);
        for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& segment = info->dlpi_phdr[i];
          if (segment.p_type != PT_LOAD) continue;
          const uintptr_t begin = info->dlpi_addr + segment.p_vaddr;
          const uintptr_t end = begin + segment.p_memsz;
          if (s.address < begin || s.address >= end) continue;
          if ((segment.p_flags & s.flags) == s.flags) s.bytes_after = end - s.address;
          return 1;  // segments do not overlap: this one decides
        }
        return 0;
      },
      &search);
  return search.bytes_after;
}

template <typename Function>
const void* code_address(Function function) {
  return reinterpret_cast<const void*>(reinterpret_cast<uintptr_t>(function));
}

std::string symbol_type_name(unsigned type) {
  switch (type) {
    case STT_OBJECT:
      return "a data object";
    case STT_TLS:
      return "thread-local data";
    case STT_COMMON:
      return "common data";
    case STT_NOTYPE:
      return "a symbol without a type";
    case STT_GNU_IFUNC:
      return "an indirect function (ifunc)";
    default:
      return fmt::format("an ELF symbol of type {}", type);
  }
}

/// Checks the text a descriptor field points to: in loaded memory, NUL-
/// terminated within `limit` bytes and, when `plain`, free of control
/// characters and invalid UTF-8 (it names the plugin in messages).
void check_text(const char* text, std::string_view field, size_t limit, bool plain,
                const std::string& file) {
  const std::optional<size_t> mapped = mapped_bytes_after(text, PF_R);
  if (!mapped)
    fail("{}: plugin descriptor field `{}` does not point into the plugin's memory", file, field);
  const size_t searched = std::min(*mapped, limit + 1);
  const void* end = std::memchr(text, '\0', searched);
  if (!end)
    fail("{}: plugin descriptor field `{}` is not NUL-terminated within {} bytes", file, field,
         std::min(*mapped, limit));
  const std::string_view value(text, static_cast<size_t>(static_cast<const char*>(end) - text));
  if (plain && printable(value) != value)
    fail("{}: plugin descriptor field `{}` holds control characters or invalid UTF-8: `{}`", file,
         field, printable(value, 64));
}

void check_code(const void* function, std::string_view field, const std::string& file) {
  if (!function)
    fail("{}: plugin descriptor field `{}` is NULL (no {} function)", file, field, field);
  if (!mapped_bytes_after(function, PF_X))
    fail("{}: plugin descriptor field `{}` does not point to code", file, field);
}

}  // namespace

glmrt_describe_fn checked_entry_point(void* dl_handle, const std::string& shown_file) {
  void* symbol = dlsym(dl_handle, GLMRT_PLUGIN_ENTRY_SYMBOL);
  if (!symbol)
    fail("{}: not a glmrt plugin (it does not export `{}`)", shown_file, GLMRT_PLUGIN_ENTRY_SYMBOL);
  Dl_info where{};
  void* symbol_entry = nullptr;
  const bool described = dladdr1(symbol, &where, &symbol_entry, RTLD_DL_SYMENT) != 0;
  const auto* entry = static_cast<const ElfW(Sym)*>(symbol_entry);
  if (!described || !entry || where.dli_saddr != symbol)
    fail("{}: `{}` is not a symbol the loader can describe; expected a function", shown_file,
         GLMRT_PLUGIN_ENTRY_SYMBOL);
  const unsigned type = ELF64_ST_TYPE(entry->st_info);  // the same bits in ELF32
  if (type != STT_FUNC)
    fail("{}: `{}` is {}, not a function (a glmrt plugin exports it with GLMRT_PLUGIN_EXPORT)",
         shown_file, GLMRT_PLUGIN_ENTRY_SYMBOL, symbol_type_name(type));
  if (!mapped_bytes_after(symbol, PF_X))
    fail("{}: `{}` does not point to code", shown_file, GLMRT_PLUGIN_ENTRY_SYMBOL);
  return reinterpret_cast<glmrt_describe_fn>(symbol);
}

void check_descriptor(const glmrt_plugin_descriptor* descriptor, const std::string& file) {
  if (!descriptor) fail("{}: {}() returned no descriptor", file, GLMRT_PLUGIN_ENTRY_SYMBOL);
  const std::optional<size_t> mapped = mapped_bytes_after(descriptor, PF_R);
  if (!mapped || *mapped < kDescriptorVersionBytes)
    fail("{}: the descriptor {}() returned does not lie in the plugin's memory", file,
         GLMRT_PLUGIN_ENTRY_SYMBOL);
  const glmrt_plugin_descriptor& d = *descriptor;
  if (d.struct_size < kDescriptorVersionBytes)
    fail("{}: plugin descriptor is {} bytes, expected at least {}", file, d.struct_size,
         sizeof(glmrt_plugin_descriptor));
  if (d.abi_major != GLMRT_ABI_MAJOR)
    fail(
        "{}: plugin ABI mismatch: expected {}.x, found {}.{} (rebuild the plugin against this "
        "glmrt's SDK)",
        file, GLMRT_ABI_MAJOR, d.abi_major, d.abi_minor);
  if (d.struct_size < sizeof(glmrt_plugin_descriptor))
    fail("{}: plugin descriptor is {} bytes, expected at least {} for ABI {}.{}", file,
         d.struct_size, sizeof(glmrt_plugin_descriptor), d.abi_major, d.abi_minor);
  if (d.struct_size > kMaxDescriptorBytes)
    fail(
        "{}: plugin descriptor field `struct_size` claims {} bytes; a descriptor of ABI {}.x has "
        "{} and at most {} are accepted",
        file, d.struct_size, GLMRT_ABI_MAJOR, sizeof(glmrt_plugin_descriptor), kMaxDescriptorBytes);
  if (d.struct_size > *mapped)
    fail(
        "{}: plugin descriptor field `struct_size` claims {} bytes, but only {} are mapped where "
        "the descriptor lies",
        file, d.struct_size, *mapped);
  if (d.kind < GLMRT_PLUGIN_KERNELS || d.kind > GLMRT_PLUGIN_DRAFT)
    fail("{}: plugin descriptor field `kind` is {}; expected kernels (1), io (2) or draft (3)",
         file, d.kind);
  if (!d.name) fail("{}: plugin descriptor has no name (field `name` is NULL)", file);
  check_text(d.name, "name", kMaxNameBytes, true, file);
  if (!*d.name) fail("{}: plugin descriptor has no name (field `name` is empty)", file);
  if (d.version) check_text(d.version, "version", kMaxVersionBytes, true, file);
  if (d.description) check_text(d.description, "description", kMaxDescriptionBytes, false, file);
  check_code(code_address(d.probe), "probe", file);
  check_code(code_address(d.create), "create", file);
}

void check_probe_result(const glmrt_probe_result& probe, const std::string& shown_file) {
  if (!std::memchr(probe.reason, '\0', sizeof(probe.reason)))
    fail("{}: the plugin's probe wrote a `reason` not NUL-terminated within its {} bytes",
         shown_file, sizeof(probe.reason));
}

}  // namespace glmrt
