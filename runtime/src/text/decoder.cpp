#include "decoder.h"

#include "byte_level.h"
#include "regex.h"
#include "utf8.h"

namespace glmrt::text {

namespace {

// Byte-level symbols back to bytes; a token holding any other character is
// taken as its raw UTF-8. Invalid UTF-8 in the result becomes U+FFFD.
class ByteLevelDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    const ByteLevelAlphabet& alphabet = byte_level_alphabet();
    std::string bytes;
    std::string token_bytes;
    for (const std::string& token : tokens) {
      token_bytes.clear();
      bool all_mapped = true;
      for (std::size_t pos = 0; pos < token.size();) {
        const auto [cp, length] = utf8::decode_at(token, pos);
        pos += length;
        const auto byte = alphabet.byte_of(cp);
        if (!byte) {
          all_mapped = false;
          break;
        }
        token_bytes.push_back(static_cast<char>(*byte));
      }
      bytes.append(all_mapped ? token_bytes : token);
    }
    tokens.assign(1, utf8::repair_lossy(bytes));
  }
};

// <0xAB> tokens back to bytes; a run that is not valid UTF-8 gives one
// U+FFFD per byte.
class ByteFallbackDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::vector<std::string> out;
    std::string pending;
    auto flush = [&] {
      if (pending.empty()) return;
      if (!utf8::first_invalid(pending)) {
        out.push_back(pending);
      } else {
        for (std::size_t i = 0; i < pending.size(); ++i) out.emplace_back("\xEF\xBF\xBD");
      }
      pending.clear();
    };
    for (std::string& token : tokens) {
      if (const auto byte = parse_byte_token(token)) {
        pending.push_back(static_cast<char>(*byte));
        continue;
      }
      flush();
      out.push_back(std::move(token));
    }
    flush();
    tokens = std::move(out);
  }

 private:
  static std::optional<unsigned char> parse_byte_token(std::string_view token) {
    if (token.size() != 6 || !token.starts_with("<0x") || token.back() != '>') return std::nullopt;
    unsigned value = 0;
    for (const char c : token.substr(3, 2)) {
      value <<= 4;
      if (c >= '0' && c <= '9')
        value |= static_cast<unsigned>(c - '0');
      else if (c >= 'A' && c <= 'F')
        value |= static_cast<unsigned>(c - 'A' + 10);
      else if (c >= 'a' && c <= 'f')
        value |= static_cast<unsigned>(c - 'a' + 10);
      else
        return std::nullopt;
    }
    return static_cast<unsigned char>(value);
  }
};

class FuseDecoder final : public Decoder {
 public:
  void decode_chain(std::vector<std::string>& tokens) const override {
    std::string joined;
    for (const auto& t : tokens) joined += t;
    tokens.assign(1, std::move(joined));
  }
};

// Removes up to `start` leading and `stop` trailing copies of one character.
class StripDecoder final : public Decoder {
 public:
  StripDecoder(const Json& spec, const JsonPath& where)
      : content_(require_string(spec, "content", where)),
        start_(optional_value<std::size_t>(spec, "start", 0, where)),
        stop_(optional_value<std::size_t>(spec, "stop", 0, where)) {}

  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& token : tokens) {
      std::string_view view = token;
      for (std::size_t i = 0; i < start_ && view.starts_with(content_); ++i)
        view.remove_prefix(content_.size());
      for (std::size_t i = 0; i < stop_ && view.ends_with(content_); ++i)
        view.remove_suffix(content_.size());
      token = std::string(view);
    }
  }

 private:
  std::string content_;
  std::size_t start_, stop_;
};

class ReplaceDecoder final : public Decoder {
 public:
  ReplaceDecoder(const Json& spec, const JsonPath& where)
      : regex_(pattern_as_regex(spec, where), where.text),
        content_(require_string(spec, "content", where)) {}

  void decode_chain(std::vector<std::string>& tokens) const override {
    for (std::string& token : tokens) {
      std::string out;
      std::size_t previous = 0;
      for (const Span& m : regex_.find_all(token)) {
        out.append(token, previous, m.begin - previous).append(content_);
        previous = m.end;
      }
      out.append(token, previous);
      token = std::move(out);
    }
  }

 private:
  Regex regex_;
  std::string content_;
};

class DecoderSequence final : public Decoder {
 public:
  explicit DecoderSequence(std::vector<std::unique_ptr<Decoder>> steps)
      : steps_(std::move(steps)) {}
  void decode_chain(std::vector<std::string>& tokens) const override {
    for (const auto& step : steps_) step->decode_chain(tokens);
  }

 private:
  std::vector<std::unique_ptr<Decoder>> steps_;
};

}  // namespace

std::unique_ptr<Decoder> make_decoder(const Json& spec, const JsonPath& where) {
  if (spec.is_null()) return nullptr;
  const std::string type = component_type(spec, where);
  if (type == "ByteLevel") return std::make_unique<ByteLevelDecoder>();
  if (type == "ByteFallback") return std::make_unique<ByteFallbackDecoder>();
  if (type == "Fuse") return std::make_unique<FuseDecoder>();
  if (type == "Strip") return std::make_unique<StripDecoder>(spec, where);
  if (type == "Replace") return std::make_unique<ReplaceDecoder>(spec, where);
  if (type == "Sequence") {
    const Json& list = require(spec, "decoders", where);
    if (!list.is_array()) fail("{}: 'decoders' must be an array", where.text);
    std::vector<std::unique_ptr<Decoder>> steps;
    for (std::size_t i = 0; i < list.size(); ++i) {
      auto step = make_decoder(list[i], where.field("decoders").index(i));
      if (step) steps.push_back(std::move(step));
    }
    return std::make_unique<DecoderSequence>(std::move(steps));
  }
  fail("{}: unsupported decoder type '{}'", where.text, type);
}

}  // namespace glmrt::text
