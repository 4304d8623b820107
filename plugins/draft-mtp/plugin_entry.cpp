// Descriptor and factory of draft-mtp.
#include "mtp_draft.h"

#include <glmrt/plugin/plugin.h>

#include <cstdio>
#include <exception>
#include <memory>
#include <string>

namespace {

void write_error(char* error, size_t error_len, const std::string& message) {
  if (error && error_len > 0) std::snprintf(error, error_len, "%s", message.c_str());
}

void probe(glmrt_probe_result* out) {
  out->supported = 1;
  out->score = 1;
  std::snprintf(out->reason, sizeof(out->reason),
                "runs the checkpoint's MTP layer (needs a checkpoint with one)");
}

void* create(const glmrt_host_services* host, const glmrt_setting* settings, size_t n_settings,
             char* error, size_t error_len) {
  try {
    if (!host || host->struct_size < sizeof(glmrt_host_services) ||
        host->abi_major != GLMRT_ABI_MAJOR || host->abi_minor < GLMRT_ABI_MINOR_DRAFT) {
      write_error(error, error_len, "draft-mtp needs host services of ABI 1.2 or newer");
      return nullptr;
    }
    glmrt::draft_mtp::MtpSettings parsed;
    std::string message;
    if (!glmrt::draft_mtp::parse_settings(settings, n_settings, parsed, message)) {
      write_error(error, error_len, message);
      return nullptr;
    }
    auto draft = std::make_unique<glmrt::draft_mtp::MtpDraft>(*host, parsed);
    return static_cast<glmrt::plugin::Draft*>(draft.release());
  } catch (const std::exception& e) {
    write_error(error, error_len, std::string("draft-mtp: ") + e.what());
    return nullptr;
  }
}

const glmrt_plugin_descriptor kDescriptor = {
    sizeof(glmrt_plugin_descriptor),
    GLMRT_ABI_MAJOR,
    GLMRT_ABI_MINOR,
    GLMRT_PLUGIN_DRAFT,
    "draft-mtp",
    "1.0.0",
    "drafts from the checkpoint's MTP layer, chained on its own output; stops under p_min",
    &probe,
    &create,
};

}  // namespace

GLMRT_PLUGIN_EXPORT const glmrt_plugin_descriptor* glmrt_plugin_describe(void) {
  return &kDescriptor;
}
