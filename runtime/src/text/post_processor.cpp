#include "post_processor.h"

#include <algorithm>
#include <utility>

namespace glmrt::text {

namespace {

struct SpecialPiece {
  std::vector<std::uint32_t> ids;
  std::vector<std::string> tokens;
};

// The single-sequence template: special pieces and the place of the sequence.
class Template final : public PostProcessor {
 public:
  Template(std::vector<SpecialPiece> before, std::vector<SpecialPiece> after)
      : before_(std::move(before)), after_(std::move(after)) {}

  void add_special_tokens(std::vector<std::uint32_t>& ids,
                          std::vector<std::string>& tokens) const override {
    std::vector<std::uint32_t> new_ids;
    std::vector<std::string> new_tokens;
    for (const auto& p : before_) {
      new_ids.insert(new_ids.end(), p.ids.begin(), p.ids.end());
      new_tokens.insert(new_tokens.end(), p.tokens.begin(), p.tokens.end());
    }
    new_ids.insert(new_ids.end(), ids.begin(), ids.end());
    new_tokens.insert(new_tokens.end(), tokens.begin(), tokens.end());
    for (const auto& p : after_) {
      new_ids.insert(new_ids.end(), p.ids.begin(), p.ids.end());
      new_tokens.insert(new_tokens.end(), p.tokens.begin(), p.tokens.end());
    }
    ids = std::move(new_ids);
    tokens = std::move(new_tokens);
  }

 private:
  std::vector<SpecialPiece> before_, after_;
};

class NoOp final : public PostProcessor {
 public:
  void add_special_tokens(std::vector<std::uint32_t>&, std::vector<std::string>&) const override {}
};

class PostProcessorSequence final : public PostProcessor {
 public:
  explicit PostProcessorSequence(std::vector<std::unique_ptr<PostProcessor>> steps)
      : steps_(std::move(steps)) {}
  void add_special_tokens(std::vector<std::uint32_t>& ids,
                          std::vector<std::string>& tokens) const override {
    for (const auto& step : steps_) step->add_special_tokens(ids, tokens);
  }

 private:
  std::vector<std::unique_ptr<PostProcessor>> steps_;
};

constexpr std::uint64_t kMaxTokenId = 0xFFFFFFFF;

bool is_token_id(const Json& value) {
  return value.is_number_unsigned() && value.get<std::uint64_t>() <= kMaxTokenId;
}

std::unique_ptr<PostProcessor> make_template(const Json& spec, const JsonPath& where) {
  const Json& single = require(spec, "single", where);
  if (!single.is_array()) fail("{}: 'single' must be an array", where.text);
  const Json& specials = spec.contains("special_tokens") ? spec["special_tokens"] : Json::object();
  std::vector<SpecialPiece> before, after;
  bool seen_sequence = false;
  for (std::size_t i = 0; i < single.size(); ++i) {
    const JsonPath at = where.field("single").index(i);
    const Json& item = single[i];
    if (item.contains("Sequence")) {
      seen_sequence = true;
      continue;
    }
    const Json& special = require(item, "SpecialToken", at);
    const std::string name = require_string(special, "id", at.field("SpecialToken"));
    if (!specials.contains(name))
      fail("{}: special token '{}' is not in 'special_tokens'", at.text, name);
    const Json& entry = specials[name];
    const JsonPath entry_at = where.field("special_tokens").field(name);
    SpecialPiece piece;
    const Json& ids = require(entry, "ids", entry_at);
    const Json& tokens = require(entry, "tokens", entry_at);
    // Checked one by one: get<uint32_t>() would wrap -1 and truncate 1e30.
    const bool valid =
        ids.is_array() && tokens.is_array() && std::all_of(ids.begin(), ids.end(), is_token_id) &&
        std::all_of(tokens.begin(), tokens.end(), [](const Json& t) { return t.is_string(); });
    if (!valid) {
      fail("{}: 'ids' must be token ids (integers from 0 to {}) and 'tokens' strings",
           entry_at.text, kMaxTokenId);
    }
    for (const Json& id : ids) piece.ids.push_back(id.get<std::uint32_t>());
    for (const Json& token : tokens) piece.tokens.push_back(token.get<std::string>());
    if (piece.ids.size() != piece.tokens.size())
      fail("{}: 'ids' and 'tokens' differ in length", entry_at.text);
    (seen_sequence ? after : before).push_back(std::move(piece));
  }
  return std::make_unique<Template>(std::move(before), std::move(after));
}

// BertProcessing / RobertaProcessing: cls + sequence + sep, each ["token", id].
std::unique_ptr<PostProcessor> make_cls_sep(const Json& spec, const JsonPath& where) {
  auto piece = [&](std::string_view key) {
    const Json& value = require(spec, key, where);
    if (!value.is_array() || value.size() != 2 || !value[0].is_string() || !is_token_id(value[1]))
      fail("{}: '{}' must be [\"token\", id] with an id from 0 to {}", where.text, key,
           kMaxTokenId);
    return SpecialPiece{{value[1].get<std::uint32_t>()}, {value[0].get<std::string>()}};
  };
  return std::make_unique<Template>(std::vector{piece("cls")}, std::vector{piece("sep")});
}

}  // namespace

std::unique_ptr<PostProcessor> make_post_processor(const Json& spec, const JsonPath& where) {
  if (spec.is_null()) return nullptr;
  const std::string type = component_type(spec, where);
  if (type == "ByteLevel") return std::make_unique<NoOp>();
  if (type == "TemplateProcessing") return make_template(spec, where);
  if (type == "BertProcessing" || type == "RobertaProcessing") return make_cls_sep(spec, where);
  if (type == "Sequence") {
    const Json& list = require(spec, "processors", where);
    if (!list.is_array()) fail("{}: 'processors' must be an array", where.text);
    std::vector<std::unique_ptr<PostProcessor>> steps;
    for (std::size_t i = 0; i < list.size(); ++i) {
      auto step = make_post_processor(list[i], where.field("processors").index(i));
      if (step) steps.push_back(std::move(step));
    }
    return std::make_unique<PostProcessorSequence>(std::move(steps));
  }
  fail("{}: unsupported post_processor type '{}'", where.text, type);
}

}  // namespace glmrt::text
