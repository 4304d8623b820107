// Cache-aware routing (profile `routing.cache_bias`): the setting, whether
// the running forward call is a decode or verification step, and what it did.
// Off unless asked: with bias 0, or outside decode steps, routing is exact.
#pragma once

#include <cstdint>

namespace glmrt {

struct CacheBiasRouting {
  float bias = 0;             // routing.cache_bias; 0 = the model's exact routing
  bool decode_step = false;   // the running forward call decodes or verifies
  int64_t rows = 0;           // positions of the forward calls it applied in
  int64_t choices = 0;        // experts those positions chose, over every MoE layer
  int64_t substitutions = 0;  // of those, experts the exact routing would not have chosen

  bool on() const { return bias > 0; }
  bool applies() const { return on() && decode_step; }
};

}  // namespace glmrt
