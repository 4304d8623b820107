#include <glmrt/model/packed_weights.h>

#include <chrono>

namespace glmrt {
namespace {

class Packer {
 public:
  explicit Packer(const KernelsBackend& kernels) : kernels_(kernels) {}

  void operator()(Matrix& m) {
    if (!kernels_.pack(m)) return;
    ++summary_.matrices;
    summary_.bytes += m.bytes();
  }
  void feed_forward(FeedForwardWeights& f) {
    (*this)(f.gate);
    (*this)(f.up);
    (*this)(f.down);
  }
  void layer(LayerWeights& l) {
    AttentionWeights& a = l.attention;
    for (Matrix* m : {&a.q_a, &a.q_b, &a.kv_a, &a.o}) (*this)(*m);
    if (a.indexer) {
      (*this)(a.indexer->wq_b);
      (*this)(a.indexer->wk);
    }
    feed_forward(l.mlp_kind == MlpKind::dense ? l.dense : l.moe.shared);
  }
  PackedWeightsSummary summary() const { return summary_; }

 private:
  const KernelsBackend& kernels_;
  PackedWeightsSummary summary_;
};

}  // namespace

PackedWeightsSummary pack_resident_weights(ModelWeights& weights, const KernelsBackend& kernels) {
  const auto start = std::chrono::steady_clock::now();
  Packer pack(kernels);
  pack(weights.lm_head);
  for (LayerWeights& l : weights.layers) pack.layer(l);
  if (weights.mtp) {
    pack.layer(weights.mtp->layer);
    pack(weights.mtp->eh_proj);
    pack(weights.mtp->head);
  }
  PackedWeightsSummary summary = pack.summary();
  summary.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return summary;
}

}  // namespace glmrt
