// Descriptor and factory of draft-ngram.
#include "ngram_draft.h"

#include <draft_entry.h>
#include <glmrt/plugin/plugin.h>

#include <cstdio>

namespace {

void probe(glmrt_probe_result* out) {
  out->supported = 1;
  out->score = 1;
  std::snprintf(out->reason, sizeof(out->reason), "prompt lookup, runs everywhere");
}

void* create(const glmrt_host_services* host, const glmrt_setting* settings, size_t n_settings,
             char* error, size_t error_len) {
  return glmrt::plugin_support::create_draft<glmrt::draft_ngram::NgramDraft,
                                             glmrt::draft_ngram::NgramSettings>(
      "draft-ngram", &glmrt::draft_ngram::parse_settings, host, settings, n_settings, error,
      error_len);
}

const glmrt_plugin_descriptor kDescriptor = {
    sizeof(glmrt_plugin_descriptor),
    GLMRT_ABI_MAJOR,
    GLMRT_ABI_MINOR,
    GLMRT_PLUGIN_DRAFT,
    "draft-ngram",
    "1.0.0",
    "prompt-lookup drafts: the continuation of the history's last n-gram's most recent earlier "
    "occurrence (min_n..max_n, longest first); deterministic, one-hot q",
    &probe,
    &create,
};

}  // namespace

GLMRT_PLUGIN_EXPORT const glmrt_plugin_descriptor* glmrt_plugin_describe(void) {
  return &kDescriptor;
}
