#include <glmrt/model/activation_observer.h>

#include <fmt/format.h>

namespace glmrt {

std::string matmul_weight_name(const MatmulSite& site) {
  if (site.layer < 0) return std::string(site.weight);
  if (site.expert >= 0)
    return fmt::format("model.layers.{}.mlp.experts.{}.{}", site.layer, site.expert, site.weight);
  if (site.module.empty()) return fmt::format("model.layers.{}.{}", site.layer, site.weight);
  return fmt::format("model.layers.{}.{}.{}", site.layer, site.module, site.weight);
}

}  // namespace glmrt
