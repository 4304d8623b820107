// Reading ahead: the experts a layer's next step is predicted to need are
// read into free slots of its pool while other work runs, up to the layer's
// prefetch slots; those that cannot be read into a slot ahead of time (they
// go through the staging buffer, or the io plugin reads only when asked) are
// hinted to the plugin instead. A wrong guess costs a read, never a result.
#pragma once

#include <glmrt/experts/expert_layer_pool.h>
#include <glmrt/experts/expert_store_stats.h>
#include <glmrt/experts/io_channel.h>

#include <cstdint>
#include <span>

namespace glmrt {

class ExpertReadAhead {
 public:
  /// Reads up to `slots_per_layer` experts ahead per call (0: none, only
  /// the prediction is recorded); counts go to `stats`.
  ExpertReadAhead(IoChannel& io, int slots_per_layer, ExpertStoreStats& stats)
      : io_(io), slots_per_layer_(slots_per_layer), stats_(stats) {}

  /// The experts `ids` of `pool`'s layer (most likely first) will probably
  /// be needed by its next step: records the prediction and reads ahead.
  void prefetch(ExpertLayerPool& pool, std::span<const int32_t> ids);

 private:
  IoChannel& io_;
  int slots_per_layer_;
  ExpertStoreStats& stats_;
};

}  // namespace glmrt
