#include "decisions.h"

#include <set>
#include <tuple>

namespace glmrt {
namespace {

const std::vector<int32_t>* find_row(const std::map<int, ForwardTrace::ByPosition>& by_layer,
                                     int layer, int64_t position) {
  auto l = by_layer.find(layer);
  if (l == by_layer.end()) return nullptr;
  auto p = l->second.find(position);
  return p == l->second.end() ? nullptr : &p->second;
}

class Comparer {
 public:
  Comparer(int main_layers, CaseReport& r) : main_layers_(main_layers), r_(r) {}

  /// One row: `kind_order` 0 = indexer, 1 = experts (the indexer runs first
  /// within a layer, so its divergence is the earlier one).
  bool same(int kind_order, int layer, int64_t position, const std::vector<int32_t>* ours,
            const std::vector<int32_t>& reference) {
    if (ours && *ours == reference) return true;
    const auto key = std::make_tuple(layer >= main_layers_, position, layer, kind_order);
    if (!r_.first_divergence || key < first_key_) {
      first_key_ = key;
      r_.first_divergence = Divergence{kind_order == 0 ? "indexer" : "experts", layer, position,
                                       ours ? *ours : std::vector<int32_t>{}, reference};
    }
    return false;
  }

 private:
  int main_layers_;
  CaseReport& r_;
  std::tuple<bool, int64_t, int, int> first_key_{};
};

}  // namespace

void compare_decisions(const OracleCase& c, const ForwardTrace& trace, int main_layers,
                       CaseReport& r) {
  Comparer compare(main_layers, r);
  std::set<int64_t> rows_off_reference;
  for (const auto& [layer, rows] : c.indexer_topk) {
    for (size_t i = 0; i < rows.size(); ++i) {
      const int64_t position = c.sparse_rows_from + static_cast<int64_t>(i);
      ++r.indexer_rows_compared;
      if (compare.same(0, layer, position, find_row(trace.indexer, layer, position), rows[i]))
        continue;
      ++r.indexer_rows_differ;
      if (layer < main_layers) rows_off_reference.insert(position);
    }
  }
  for (const auto& [layer, rows] : c.experts) {
    for (size_t t = 0; t < rows.size(); ++t) {
      const auto position = static_cast<int64_t>(t);
      ++r.routing_rows_compared;
      if (!compare.same(1, layer, position, find_row(trace.experts, layer, position), rows[t]))
        ++r.routing_rows_differ;
    }
  }
  if (c.indexer_topk.empty()) {
    // No recorded selections to compare with: a sparse row still counts when
    // no layer of this run selected keys for it (the indexer did not run).
    for (int64_t t = c.sparse_rows_from; t < static_cast<int64_t>(c.full_ids.size()); ++t) {
      bool selected = false;
      for (const auto& [layer, by_position] : trace.indexer)
        selected = selected || (layer < main_layers && by_position.contains(t));
      if (!selected) rows_off_reference.insert(t);
    }
  }
  r.rows_need_dsa = static_cast<int64_t>(rows_off_reference.size());
}

}  // namespace glmrt
