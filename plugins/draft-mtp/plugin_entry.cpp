// Descriptor and factory of draft-mtp.
#include "mtp_draft.h"

#include <plugin_entry.h>

#include <cstdio>

namespace {

namespace support = glmrt::plugin_support;
using glmrt::draft_mtp::MtpDraft;

void probe(glmrt_probe_result* out) {
  out->supported = 1;
  out->score = 1;
  std::snprintf(out->reason, sizeof(out->reason),
                "runs the checkpoint's MTP layer (needs a checkpoint with one)");
}

void* create(const glmrt_host_services* host, const glmrt_setting* settings, size_t n_settings,
             char* error, size_t error_len) {
  return support::create_plugin<glmrt::plugin::Draft, glmrt::draft_mtp::MtpSettings>(
      MtpDraft::kName, GLMRT_ABI_MINOR_DRAFT, &glmrt::draft_mtp::parse_settings,
      support::construct<MtpDraft>, host, settings, n_settings, error, error_len);
}

constexpr glmrt_plugin_descriptor kDescriptor = support::plugin_descriptor(
    GLMRT_PLUGIN_DRAFT, MtpDraft::kName, "1.0.0",
    "drafts from the checkpoint's MTP layer, chained on its own output; stops under p_min", &probe,
    &create);

}  // namespace

GLMRT_PLUGIN_EXPORT const glmrt_plugin_descriptor* glmrt_plugin_describe(void) {
  return &kDescriptor;
}
