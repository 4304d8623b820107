// Descriptor and factory of draft-mtp.
#include "mtp_draft.h"

#include <draft_entry.h>
#include <glmrt/plugin/plugin.h>

#include <cstdio>

namespace {

void probe(glmrt_probe_result* out) {
  out->supported = 1;
  out->score = 1;
  std::snprintf(out->reason, sizeof(out->reason),
                "runs the checkpoint's MTP layer (needs a checkpoint with one)");
}

void* create(const glmrt_host_services* host, const glmrt_setting* settings, size_t n_settings,
             char* error, size_t error_len) {
  return glmrt::plugin_support::create_draft<glmrt::draft_mtp::MtpDraft,
                                             glmrt::draft_mtp::MtpSettings>(
      "draft-mtp", &glmrt::draft_mtp::parse_settings, host, settings, n_settings, error, error_len);
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
