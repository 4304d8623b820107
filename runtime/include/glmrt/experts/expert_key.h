// One routed expert of one expert-store row (a main layer, or the MTP layer).
#pragma once

namespace glmrt {

struct ExpertKey {
  int layer = 0;
  int expert = 0;
  bool operator==(const ExpertKey&) const = default;
};

}  // namespace glmrt
