// anyOf/oneOf of several object schemas (Pydantic's Union[Cat, Dog], Zod's
// z.union of objects): one node whose properties are every branch's. The
// byte automaton keeps the set of branches an object's keys and values so far
// leave possible, so a branch is told by a key only it declares or by the
// enum/const value of a key the branches share (a discriminator). A key
// shared with different schemas that are not enum/const values would need
// the automaton to follow two parses of one value; such a union is refused.
#include <glmrt/base/printable.h>

#include "schema_compiler.h"

#include <algorithm>
#include <map>

namespace glmrt::grammar {

bool JsonSchema::Compiler::same_schema(int a, int b) const {
  if (a == b) return true;
  if (a < 0 || b < 0) return false;
  const SchemaNode& x = out_.nodes_[a];
  const SchemaNode& y = out_.nodes_[b];
  const auto same_literals = [&](int p, int q) {
    if (p < 0 || q < 0) return p == q;
    return out_.literal_sets_[p].texts == out_.literal_sets_[q].texts &&
           out_.literal_sets_[p].tags == out_.literal_sets_[q].tags;
  };
  if (x.types != y.types || !same_literals(x.literals, y.literals) ||
      x.literals_or_types != y.literals_or_types || x.min_length != y.min_length ||
      x.max_length != y.max_length || x.format != y.format || x.bounded != y.bounded ||
      x.low != y.low || x.high != y.high || x.min_items != y.min_items ||
      x.max_items != y.max_items || x.required != y.required ||
      x.properties.size() != y.properties.size() ||
      x.object_branches.size() != y.object_branches.size())
    return false;
  if ((x.types & kArrayType) && !same_schema(x.items, y.items)) return false;
  if ((x.additional < 0) != (y.additional < 0) ||
      (x.additional >= 0 && !same_schema(x.additional, y.additional)))
    return false;
  for (size_t i = 0; i < x.properties.size(); ++i)
    if (x.properties[i].name != y.properties[i].name ||
        x.properties[i].tells_branches != y.properties[i].tells_branches ||
        !same_schema(x.properties[i].node, y.properties[i].node))
      return false;
  for (size_t i = 0; i < x.object_branches.size(); ++i)
    if (x.object_branches[i].declares != y.object_branches[i].declares ||
        x.object_branches[i].required != y.object_branches[i].required)
      return false;
  return true;
}

void JsonSchema::Compiler::merge_objects(const std::vector<int>& nodes, const std::string& path,
                                         const char* key, SchemaNode& merged) {
  if (nodes.size() > kMaxObjectBranches)
    refuse_schema(path, key,
                  fmt::format("`{}` at {} has {} object branches; at most {} are supported", key,
                              schema_where(path), nodes.size(), kMaxObjectBranches));
  // Every name, in first-seen order, with the branches declaring it and their schemas.
  struct Shared {
    std::string name;
    std::vector<std::pair<size_t, int>> uses;  // (branch, node)
  };
  std::vector<Shared> names;
  for (size_t b = 0; b < nodes.size(); ++b) {
    const SchemaNode& branch = out_.nodes_[nodes[b]];
    if (branch.additional >= 0)
      refuse_schema(path, key,
                    fmt::format("`{}` at {}: object branch {} allows keys it does not list; "
                                "constrained decoding tells object branches apart by their keys, "
                                "so each must list its properties (add \"additionalProperties\": "
                                "false)",
                                key, schema_where(path), b));
    for (const Property& p : branch.properties) {
      auto it = std::find_if(names.begin(), names.end(),
                             [&](const Shared& s) { return s.name == p.name; });
      if (it == names.end()) it = names.insert(names.end(), Shared{p.name, {}});
      it->uses.push_back({b, p.node});
    }
  }
  if (names.size() > 64)
    refuse_schema(path, key,
                  fmt::format("`{}` at {}: its object branches have {} distinct properties; at "
                              "most 64 are supported",
                              key, schema_where(path), names.size()));
  merged.properties.clear();
  merged.object_branches.assign(nodes.size(), ObjectBranch{});
  for (size_t b = 0; b < nodes.size(); ++b) merged.object_branches[b].node = nodes[b];
  LiteralSet keys;
  for (size_t i = 0; i < names.size(); ++i) {
    const Shared& shared = names[i];
    Property property{shared.name, shared.uses[0].second};
    const bool alike = std::all_of(shared.uses.begin(), shared.uses.end(), [&](const auto& use) {
      return same_schema(use.second, shared.uses[0].second);
    });
    if (!alike) {
      // A discriminator: each value says which of these branches it belongs to.
      std::map<std::string, uint32_t> branches_of;
      for (const auto& [b, node] : shared.uses) {
        const SchemaNode& value = out_.nodes_[node];
        if (value.literals < 0 || value.literals_or_types)
          refuse_schema(path, key,
                        fmt::format("`{}` at {}: object branches give the property `{}` "
                                    "different schemas that are not enum/const values; "
                                    "constrained decoding tells object branches apart by their "
                                    "keys and by enum/const values of a shared key",
                                    key, schema_where(path), printable(shared.name, 64)));
        for (const std::string& text : out_.literal_sets_[value.literals].texts)
          branches_of[text] |= uint32_t{1} << b;
      }
      LiteralSet values;
      for (const auto& [text, mask] : branches_of) {
        values.texts.push_back(text);
        values.tags.push_back(static_cast<int>(mask));
      }
      SchemaNode discriminator = out_.nodes_[shared.uses[0].second];
      discriminator.literals = out_.add_literals(std::move(values));
      out_.nodes_.push_back(std::move(discriminator));
      property.node = static_cast<int>(out_.nodes_.size() - 1);
      property.tells_branches = true;
    }
    for (const auto& [b, node] : shared.uses) {
      const SchemaNode& branch = out_.nodes_[nodes[b]];
      merged.object_branches[b].declares |= uint64_t{1} << i;
      const auto own = std::find_if(branch.properties.begin(), branch.properties.end(),
                                    [&](const Property& p) { return p.name == shared.name; });
      if (branch.required >> (own - branch.properties.begin()) & 1)
        merged.object_branches[b].required |= uint64_t{1} << i;
    }
    keys.texts.push_back(Json(shared.name).dump());
    keys.tags.push_back(static_cast<int>(i));
    merged.properties.push_back(std::move(property));
  }
  merged.required = 0;
  merged.additional = -1;
  merged.keys = keys.texts.empty() ? -1 : out_.add_literals(std::move(keys));
}

// oneOf: no object may satisfy two branches. Two are exclusive when one
// requires a key the other does not list, or both require a key whose
// values they share none of.
void JsonSchema::Compiler::check_branches_exclusive(const SchemaNode& merged,
                                                    const std::string& path) {
  const auto& branches = merged.object_branches;
  for (size_t a = 0; a < branches.size(); ++a)
    for (size_t b = a + 1; b < branches.size(); ++b) {
      bool exclusive = (branches[a].required & ~branches[b].declares) ||
                       (branches[b].required & ~branches[a].declares);
      const uint64_t both = branches[a].required & branches[b].required;
      for (size_t i = 0; i < merged.properties.size() && !exclusive; ++i) {
        if (!(both >> i & 1) || !merged.properties[i].tells_branches) continue;
        const LiteralSet& values =
            out_.literal_sets_[out_.nodes_[merged.properties[i].node].literals];
        const uint32_t pair = (uint32_t{1} << a) | (uint32_t{1} << b);
        exclusive = std::none_of(values.tags.begin(), values.tags.end(), [&](int tag) {
          return (static_cast<uint32_t>(tag) & pair) == pair;
        });
      }
      if (!exclusive)
        refuse_schema(path, "oneOf",
                      fmt::format("`oneOf` at {}: an object may satisfy both branch {} and "
                                  "branch {} (no key one requires is missing from the other, "
                                  "and no key both require has values of its own in each); "
                                  "use `anyOf`, or give the branches a discriminating key",
                                  schema_where(path), a, b));
    }
}

}  // namespace glmrt::grammar
