// The run's discrete decisions (DSA key selections, routed experts) against
// the ones the reference recorded.
#pragma once

#include <glmrt/model/forward_trace.h>
#include <glmrt/validate/oracle.h>

namespace glmrt {

/// Fills r's indexer/routing counters, rows_need_dsa and first_divergence
/// from one teacher-forced pass over c.full_ids recorded in `trace`.
/// `main_layers` = num_hidden_layers (layers at or above it are the MTP layer).
void compare_decisions(const OracleCase& c, const ForwardTrace& trace, int main_layers,
                       CaseReport& r);

}  // namespace glmrt
