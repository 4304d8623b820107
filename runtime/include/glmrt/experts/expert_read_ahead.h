// Reading ahead: the experts a layer's next step is predicted to need are
// read into free slots of its pool while other work runs, up to the layer's
// prefetch slots. An expert that needs converting is read into a read-ahead
// staging buffer and converted into its slot on arrival (read_ahead_staging.h);
// those that cannot be read ahead (the io plugin reads only when asked, or
// every staging buffer is busy) are hinted to the plugin instead. A wrong
// guess costs a read, never a result.
#pragma once

#include <glmrt/experts/expert_layer_pool.h>
#include <glmrt/experts/expert_store_stats.h>
#include <glmrt/experts/io_channel.h>
#include <glmrt/experts/read_ahead_staging.h>

#include <cstdint>
#include <span>

namespace glmrt {

class ExpertReadAhead {
 public:
  /// Reads up to `slots_per_layer` experts ahead per call (0: none); counts
  /// go to `stats`.
  /// Experts that need converting are read into the pools' read-ahead
  /// staging buffers (ExpertLayerPool::take_staging).
  ExpertReadAhead(IoChannel& io, int slots_per_layer, ExpertStoreStats& stats)
      : io_(io), slots_per_layer_(slots_per_layer), stats_(stats) {}

  /// The experts `ids` of `pool`'s layer (most likely first, those the
  /// depth chose) will probably be needed by its next step: reads ahead the
  /// ones not in memory into slots claim_guess() gives.
  void prefetch(ExpertLayerPool& pool, std::span<const int32_t> ids);

 private:
  IoChannel& io_;
  int slots_per_layer_;
  ExpertStoreStats& stats_;
};

}  // namespace glmrt
