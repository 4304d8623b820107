#include "reference_forward.h"

#include "reference_math.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace glmrt::test {
namespace {

using namespace reference;  // NOLINT: the math helpers read best unqualified
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------- the model

class ReferenceModel {
 public:
  ReferenceModel(const ReferenceConfig& c, const TensorList& tensors) : c_(c), w_(tensors) {}

  ReferenceResult run(std::span<const int32_t> tokens, bool with_mtp);

 private:
  using Selection = std::vector<std::vector<int>>;  // per position; empty = every visible key

  const HostTensor& get(const std::string& name, std::vector<int64_t> shape) const {
    return w_.get(name, std::move(shape));
  }
  std::string layer_name(int layer, const std::string& suffix) const {
    return fmt::format("model.layers.{}.{}", layer, suffix);
  }

  // One decoder layer over every position of h (in place).
  void decoder_layer(int layer, bool dense, bool shared_indexer, std::vector<Vec>& h,
                     Selection& selection);
  std::vector<Vec> attention(int layer, bool shared_indexer, const std::vector<Vec>& x,
                             Selection& selection);
  Selection indexer_select(int layer, const std::vector<Vec>& x, const std::vector<Vec>& q_resid);
  std::vector<Vec> embed(const std::string& table, std::span<const int32_t> tokens);
  void mtp(std::span<const int32_t> tokens, const std::vector<Vec>& final_hidden,
           const std::string& main_head);
  Vec swiglu(const std::string& prefix, int width, const Vec& x) const;
  Vec moe(int layer, const Vec& x, std::vector<int>& chosen_experts);

  const ReferenceConfig& c_;
  Weights w_;
  ReferenceResult result_;
};

ReferenceModel::Selection ReferenceModel::indexer_select(int layer, const std::vector<Vec>& x,
                                                         const std::vector<Vec>& q_resid) {
  const int T = static_cast<int>(x.size()), IH = c_.index_heads, ID = c_.index_head_dim;
  const int R = c_.qk_rope, D = c_.hidden;
  const auto name = [&](const std::string& s) {
    return layer_name(layer, "self_attn.indexer." + s);
  };
  const HostTensor& wq_b = get(name("wq_b.weight"), {IH * ID, c_.q_lora});
  const HostTensor& wk = get(name("wk.weight"), {ID, D});
  const HostTensor& weights_proj = get(name("weights_proj.weight"), {IH, D});
  const HostTensor& k_norm_w = get(name("k_norm.weight"), {ID});
  const HostTensor& k_norm_b = get(name("k_norm.bias"), {ID});

  // Keys: LayerNorm(wk x), RoPE on the leading rope slice ([rope | nope]).
  std::vector<Vec> keys(T), queries(T), head_weights(T);
  for (int t = 0; t < T; ++t) {
    keys[t] = layer_norm(matvec(wk, x[t]), k_norm_w, k_norm_b, 1e-6);
    rope(keys[t].data(), R, t, c_.indexer_rope_interleave, c_.rope_theta);
    queries[t] = matvec(wq_b, q_resid[t]);
    for (int h = 0; h < IH; ++h)
      rope(queries[t].data() + h * ID, R, t, c_.indexer_rope_interleave, c_.rope_theta);
    head_weights[t] = matvec(weights_proj, x[t]);
    for (double& v : head_weights[t]) v /= std::sqrt(static_cast<double>(IH));
  }

  Selection selection(T);
  std::vector<std::vector<int>>& trace = result_.indexer_selection[layer];
  for (int t = 0; t < T; ++t) {
    const int visible = t + 1;
    if (visible <= c_.index_topk) continue;  // every visible key
    Vec score(visible, 0.0);
    for (int s = 0; s < visible; ++s)
      for (int h = 0; h < IH; ++h) {
        const double d = dot(queries[t].data() + h * ID, keys[s].data(), ID) / std::sqrt(ID * 1.0);
        score[s] += std::max(d, 0.0) * head_weights[t][h];
      }
    const std::vector<int> order = descending_order(score);
    double scale = 0.0;
    for (double v : score) scale = std::max(scale, std::abs(v));
    const double gap = score[order[c_.index_topk - 1]] - score[order[c_.index_topk]];
    result_.min_indexer_rel_gap =
        std::min(result_.min_indexer_rel_gap, gap / std::max(scale, 1e-30));
    selection[t].assign(order.begin(), order.begin() + c_.index_topk);
    std::sort(selection[t].begin(), selection[t].end());
    trace.push_back(selection[t]);
  }
  return selection;
}

std::vector<Vec> ReferenceModel::attention(int layer, bool shared_indexer,
                                           const std::vector<Vec>& x, Selection& selection) {
  const int T = static_cast<int>(x.size()), D = c_.hidden, H = c_.heads;
  const int L = c_.kv_lora, R = c_.qk_rope, nope = c_.qk_nope, qk = c_.qk_head(), vd = c_.v_head;
  const auto name = [&](const std::string& s) { return layer_name(layer, "self_attn." + s); };
  const HostTensor& q_a = get(name("q_a_proj.weight"), {c_.q_lora, D});
  const HostTensor& q_a_norm = get(name("q_a_layernorm.weight"), {c_.q_lora});
  const HostTensor& q_b = get(name("q_b_proj.weight"), {H * qk, c_.q_lora});
  const HostTensor& kv_a = get(name("kv_a_proj_with_mqa.weight"), {L + R, D});
  const HostTensor& kv_a_norm = get(name("kv_a_layernorm.weight"), {L});
  const HostTensor& kv_b = get(name("kv_b_proj.weight"), {H * (nope + vd), L});
  const HostTensor& o = get(name("o_proj.weight"), {D, H * vd});

  // Per position: queries [H][nope | rope], shared k_rope, and per head the
  // expanded [k_nope | v] from kv_b(latent).
  std::vector<Vec> q_resid(T), q(T), k_rope(T), kv(T);
  for (int t = 0; t < T; ++t) {
    q_resid[t] = rms_norm(matvec(q_a, x[t]), q_a_norm, 1e-6);
    q[t] = matvec(q_b, q_resid[t]);
    for (int h = 0; h < H; ++h)
      rope(q[t].data() + h * qk + nope, R, t, c_.rope_interleave, c_.rope_theta);
    const Vec compressed = matvec(kv_a, x[t]);
    const Vec latent = rms_norm(Vec(compressed.begin(), compressed.begin() + L), kv_a_norm, 1e-6);
    k_rope[t].assign(compressed.begin() + L, compressed.end());
    rope(k_rope[t].data(), R, t, c_.rope_interleave, c_.rope_theta);
    kv[t] = matvec(kv_b, latent);
  }

  if (!shared_indexer) {
    selection = indexer_select(layer, x, q_resid);
  } else {
    if (static_cast<int>(selection.size()) != T)
      throw std::logic_error("reference: a shared indexer layer without a previous selection");
    for (int t = c_.index_topk; t < T; ++t)
      result_.indexer_selection[layer].push_back(selection[t]);
  }

  const double scale = 1.0 / std::sqrt(static_cast<double>(qk));
  std::vector<Vec> out(T);
  for (int t = 0; t < T; ++t) {
    std::vector<int> keys = selection[t];
    if (keys.empty()) {  // causal: every position up to t
      keys.resize(t + 1);
      std::iota(keys.begin(), keys.end(), 0);
    }
    Vec heads_out(H * vd, 0.0);
    for (int h = 0; h < H; ++h) {
      const double* q_nope = q[t].data() + h * qk;
      const double* q_rope = q_nope + nope;
      Vec score(keys.size());
      for (size_t i = 0; i < keys.size(); ++i) {
        const double* k_nope = kv[keys[i]].data() + h * (nope + vd);
        score[i] = (dot(q_nope, k_nope, nope) + dot(q_rope, k_rope[keys[i]].data(), R)) * scale;
      }
      const double top = *std::max_element(score.begin(), score.end());
      double total = 0.0;
      for (double& s : score) total += (s = std::exp(s - top));
      for (size_t i = 0; i < keys.size(); ++i) {
        const double* v = kv[keys[i]].data() + h * (nope + vd) + nope;
        for (int j = 0; j < vd; ++j) heads_out[h * vd + j] += score[i] / total * v[j];
      }
    }
    out[t] = matvec(o, heads_out);
  }
  return out;
}

Vec ReferenceModel::swiglu(const std::string& prefix, int width, const Vec& x) const {
  const Vec gate = matvec(get(prefix + "gate_proj.weight", {width, c_.hidden}), x);
  const Vec up = matvec(get(prefix + "up_proj.weight", {width, c_.hidden}), x);
  Vec act(width);
  for (int i = 0; i < width; ++i) act[i] = silu(gate[i]) * up[i];
  return matvec(get(prefix + "down_proj.weight", {c_.hidden, width}), act);
}

Vec ReferenceModel::moe(int layer, const Vec& x, std::vector<int>& chosen_experts) {
  const int E = c_.experts;
  const HostTensor& gate = get(layer_name(layer, "mlp.gate.weight"), {E, c_.hidden});
  const HostTensor& bias = get(layer_name(layer, "mlp.gate.e_score_correction_bias"), {E});
  const Vec logits = matvec(gate, x);
  Vec score(E), choice(E);
  for (int e = 0; e < E; ++e) {
    score[e] = sigmoid(logits[e]);
    choice[e] = score[e] + bias.values[e];
  }

  if (c_.n_group > 1) {  // keep the topk_group groups with the best sum of their top 2
    const int per_group = E / c_.n_group;
    Vec group_score(c_.n_group);
    for (int g = 0; g < c_.n_group; ++g) {
      Vec members(choice.begin() + g * per_group, choice.begin() + (g + 1) * per_group);
      std::sort(members.rbegin(), members.rend());
      group_score[g] = members[0] + members[1];
    }
    const std::vector<int> groups = descending_order(group_score);
    if (c_.topk_group < c_.n_group)
      result_.min_router_gap =
          std::min(result_.min_router_gap,
                   group_score[groups[c_.topk_group - 1]] - group_score[groups[c_.topk_group]]);
    for (int i = c_.topk_group; i < c_.n_group; ++i)
      for (int e = groups[i] * per_group; e < (groups[i] + 1) * per_group; ++e)
        choice[e] = 0.0;  // transformers' masked_fill(~mask, 0.0)
  }

  const std::vector<int> order = descending_order(choice);
  if (choice[order[c_.top_k]] > -kInf)
    result_.min_router_gap =
        std::min(result_.min_router_gap, choice[order[c_.top_k - 1]] - choice[order[c_.top_k]]);
  chosen_experts.assign(order.begin(), order.begin() + c_.top_k);

  double weight_sum = 0.0;
  for (int e : chosen_experts) weight_sum += score[e];
  const double norm = c_.norm_topk_prob ? 1.0 / (weight_sum + 1e-20) : 1.0;
  Vec out =
      swiglu(layer_name(layer, "mlp.shared_experts."), c_.moe_intermediate * c_.shared_experts, x);
  for (int e : chosen_experts) {
    const Vec y =
        swiglu(layer_name(layer, fmt::format("mlp.experts.{}.", e)), c_.moe_intermediate, x);
    const double weight = score[e] * norm * c_.routed_scaling;
    for (int d = 0; d < c_.hidden; ++d) out[d] += weight * y[d];
  }
  std::sort(chosen_experts.begin(), chosen_experts.end());
  return out;
}

void ReferenceModel::decoder_layer(int layer, bool dense, bool shared_indexer, std::vector<Vec>& h,
                                   Selection& selection) {
  const int T = static_cast<int>(h.size()), D = c_.hidden;
  const HostTensor& input_norm = get(layer_name(layer, "input_layernorm.weight"), {D});
  const HostTensor& post_norm = get(layer_name(layer, "post_attention_layernorm.weight"), {D});
  std::vector<Vec> normed(T);
  for (int t = 0; t < T; ++t) normed[t] = rms_norm(h[t], input_norm, c_.rms_eps);
  const std::vector<Vec> attn = attention(layer, shared_indexer, normed, selection);
  for (int t = 0; t < T; ++t) {
    for (int d = 0; d < D; ++d) h[t][d] += attn[t][d];
    const Vec x = rms_norm(h[t], post_norm, c_.rms_eps);
    Vec mlp;
    if (dense) {
      mlp = swiglu(layer_name(layer, "mlp."), c_.intermediate, x);
    } else {
      result_.experts[layer].emplace_back();
      mlp = moe(layer, x, result_.experts[layer].back());
    }
    for (int d = 0; d < D; ++d) h[t][d] += mlp[d];
  }
}

std::vector<Vec> ReferenceModel::embed(const std::string& table, std::span<const int32_t> tokens) {
  const int D = c_.hidden;
  const HostTensor& embed = get(table, {c_.vocab, D});
  std::vector<Vec> h;
  for (int32_t token : tokens) {
    if (token < 0 || token >= c_.vocab)
      throw std::invalid_argument("reference: token out of range");
    h.emplace_back(embed.values.begin() + int64_t{token} * D,
                   embed.values.begin() + (int64_t{token} + 1) * D);
  }
  return h;
}

ReferenceResult ReferenceModel::run(std::span<const int32_t> tokens, bool with_mtp) {
  const int T = static_cast<int>(tokens.size()), D = c_.hidden, V = c_.vocab;
  std::vector<Vec> h = embed("model.embed_tokens.weight", tokens);
  Selection selection;
  for (int layer = 0; layer < c_.layers; ++layer)
    decoder_layer(layer, c_.dense_mlp[layer], c_.shared_indexer[layer], h, selection);

  const HostTensor& final_norm = get("model.norm.weight", {D});
  // As transformers: tied means embed_tokens, whatever lm_head.weight holds.
  const bool tied = c_.tie_word_embeddings;
  const std::string head_name = tied ? "model.embed_tokens.weight" : "lm_head.weight";
  const HostTensor& head = get(head_name, {V, D});
  std::vector<Vec> final_hidden(T);
  for (int t = 0; t < T; ++t) {
    final_hidden[t] = rms_norm(h[t], final_norm, c_.rms_eps);
    result_.logits.push_back(matvec(head, final_hidden[t]));
  }
  if (with_mtp && T > 1) mtp(tokens, final_hidden, head_name);
  return std::move(result_);
}

// DeepSeek-V3 style: MTP position t combines the embedding of token t+1 with
// the main model's final (normed) hidden state at t.
void ReferenceModel::mtp(std::span<const int32_t> tokens, const std::vector<Vec>& final_hidden,
                         const std::string& main_head) {
  const int m = c_.layers, D = c_.hidden, V = c_.vocab;
  const auto name = [&](const std::string& s) { return layer_name(m, s); };
  const std::string local_embed = name("embed_tokens.weight");
  const std::string local_head = name("shared_head.head.weight");
  std::vector<Vec> e =
      embed(w_.has(local_embed) ? local_embed : "model.embed_tokens.weight", tokens.subspan(1));
  const HostTensor& enorm = get(name("enorm.weight"), {D});
  const HostTensor& hnorm = get(name("hnorm.weight"), {D});
  const HostTensor& eh_proj = get(name("eh_proj.weight"), {D, 2 * D});
  std::vector<Vec> h(e.size());
  for (size_t t = 0; t < e.size(); ++t) {
    Vec joined = rms_norm(e[t], enorm, c_.rms_eps);
    const Vec from_main = rms_norm(final_hidden[t], hnorm, c_.rms_eps);
    joined.insert(joined.end(), from_main.begin(), from_main.end());
    h[t] = matvec(eh_proj, joined);
  }
  Selection selection;
  decoder_layer(m, /*dense=*/false, /*shared_indexer=*/false, h, selection);
  const HostTensor& norm = get(name("shared_head.norm.weight"), {D});
  const HostTensor& head = get(w_.has(local_head) ? local_head : main_head, {V, D});
  for (const Vec& row : h)
    result_.mtp_logits.push_back(matvec(head, rms_norm(row, norm, c_.rms_eps)));
}

}  // namespace

int ReferenceResult::argmax(size_t position) const {
  const Vec& row = logits.at(position);
  return static_cast<int>(std::max_element(row.begin(), row.end()) - row.begin());
}

double ReferenceResult::margin(size_t position) const {
  Vec row = logits.at(position);
  std::partial_sort(row.begin(), row.begin() + 2, row.end(), std::greater<>());
  return row[0] - row[1];
}

ReferenceResult reference_forward(const ReferenceConfig& config, const TensorList& weights,
                                  std::span<const int32_t> tokens, bool with_mtp) {
  return ReferenceModel(config, weights).run(tokens, with_mtp);
}

}  // namespace glmrt::test
