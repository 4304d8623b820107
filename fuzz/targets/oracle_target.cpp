// ref.json (the transformers reference outputs) through load_oracle.
#include <glmrt/base/error.h>
#include <glmrt/validate/oracle.h>

#include "fuzz_targets.h"

namespace glmrt::fuzz {

int fuzz_oracle(Input input, const ScratchDir& scratch) {
  const auto file = ScratchDir::write(scratch.folder("oracle"), "ref.json", as_text(input));
  try {
    for (const OracleCase& c : load_oracle(file)) {
      // validate() indexes these by position of full_ids: load_oracle promises them equal.
      const size_t rows = c.full_ids.size();
      expect(c.logits.size() == rows && c.margin.size() == rows && c.tf_pred.size() == rows,
             "one logits, margin and tf_pred row per full_ids position");
      expect(c.mtp_pred.size() == c.mtp_margin.size(), "mtp_pred and mtp_margin paired");
      expect(c.mtp_pred.empty() || c.mtp_pred.size() + 1 == rows, "one MTP row per position");
    }
  } catch (const Error& e) {
    refused(e);
  }
  return 0;
}

}  // namespace glmrt::fuzz
