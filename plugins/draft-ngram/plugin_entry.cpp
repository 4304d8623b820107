// Descriptor and factory of draft-ngram.
#include "ngram_draft.h"

#include <plugin_entry.h>

#include <cstdio>

namespace {

namespace support = glmrt::plugin_support;
using glmrt::draft_ngram::NgramDraft;

void probe(glmrt_probe_result* out) {
  out->supported = 1;
  out->score = 1;
  std::snprintf(out->reason, sizeof(out->reason), "prompt lookup, runs everywhere");
}

void* create(const glmrt_host_services* host, const glmrt_setting* settings, size_t n_settings,
             char* error, size_t error_len) {
  return support::create_plugin<glmrt::plugin::Draft, glmrt::draft_ngram::NgramSettings>(
      NgramDraft::kName, GLMRT_ABI_MINOR_DRAFT, &glmrt::draft_ngram::parse_settings,
      support::construct<NgramDraft>, host, settings, n_settings, error, error_len);
}

constexpr glmrt_plugin_descriptor kDescriptor = support::plugin_descriptor(
    GLMRT_PLUGIN_DRAFT, NgramDraft::kName, "1.0.0",
    "prompt-lookup drafts: the continuation of the history's last n-gram's most recent earlier "
    "occurrence (min_n..max_n, longest first); deterministic, one-hot q",
    &probe, &create);

}  // namespace

GLMRT_PLUGIN_EXPORT const glmrt_plugin_descriptor* glmrt_plugin_describe(void) {
  return &kDescriptor;
}
