#include "normalizer.h"

#include <unicode/locid.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>

#include <vector>

#include "regex.h"
#include "utf8.h"

namespace glmrt::text {

namespace {

bool is_ascii(std::string_view text) {
  for (const char c : text)
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  return true;
}

class UnicodeNormalization final : public Normalizer {
 public:
  enum class Form { kNfc, kNfd, kNfkc, kNfkd };

  UnicodeNormalization(Form form, const JsonPath& where) : where_(where.text) {
    UErrorCode status = U_ZERO_ERROR;
    switch (form) {
      case Form::kNfc:
        normalizer_ = icu::Normalizer2::getNFCInstance(status);
        break;
      case Form::kNfd:
        normalizer_ = icu::Normalizer2::getNFDInstance(status);
        break;
      case Form::kNfkc:
        normalizer_ = icu::Normalizer2::getNFKCInstance(status);
        break;
      case Form::kNfkd:
        normalizer_ = icu::Normalizer2::getNFKDInstance(status);
        break;
    }
    if (U_FAILURE(status)) fail("{}: ICU normalizer unavailable: {}", where_, u_errorName(status));
  }

  std::string normalize(std::string_view text) const override {
    if (is_ascii(text)) return std::string(text);  // ASCII is invariant under every form
    UErrorCode status = U_ZERO_ERROR;
    const icu::UnicodeString input = icu::UnicodeString::fromUTF8(
        icu::StringPiece(text.data(), static_cast<std::int32_t>(text.size())));
    if (normalizer_->isNormalized(input, status) && U_SUCCESS(status)) return std::string(text);
    status = U_ZERO_ERROR;
    const icu::UnicodeString output = normalizer_->normalize(input, status);
    if (U_FAILURE(status)) fail("{}: normalization failed: {}", where_, u_errorName(status));
    std::string result;
    output.toUTF8String(result);
    return result;
  }

 private:
  const icu::Normalizer2* normalizer_ = nullptr;  // owned by ICU, lives forever
  std::string where_;
};

// Rust's char::to_lowercase, one character at a time (no context rules).
class Lowercase final : public Normalizer {
 public:
  std::string normalize(std::string_view text) const override {
    std::string out;
    out.reserve(text.size());
    for (std::size_t pos = 0; pos < text.size();) {
      const auto [cp, length] = utf8::decode_at(text, pos);
      pos += length;
      if (cp < 0x80) {
        out.push_back(static_cast<char>(cp >= 'A' && cp <= 'Z' ? cp + 32 : cp));
        continue;
      }
      icu::UnicodeString one(static_cast<UChar32>(cp));
      one.toLower(icu::Locale::getRoot());
      one.toUTF8String(out);
    }
    return out;
  }
};

class ReplaceNormalizer final : public Normalizer {
 public:
  ReplaceNormalizer(const Json& spec, const JsonPath& where)
      : regex_(pattern_as_regex(spec, where), where.text),
        content_(require_string(spec, "content", where)) {}

  std::string normalize(std::string_view text) const override {
    std::string out;
    std::size_t previous = 0;
    for (const Span& match : regex_.find_all(text)) {
      out.append(text.substr(previous, match.begin - previous)).append(content_);
      previous = match.end;
    }
    out.append(text.substr(previous));
    return out;
  }

 private:
  Regex regex_;
  std::string content_;
};

class Prepend final : public Normalizer {
 public:
  explicit Prepend(std::string prefix) : prefix_(std::move(prefix)) {}
  std::string normalize(std::string_view text) const override {
    if (text.empty()) return {};
    return prefix_ + std::string(text);
  }

 private:
  std::string prefix_;
};

class StripNormalizer final : public Normalizer {
 public:
  StripNormalizer(bool left, bool right) : left_(left), right_(right) {}
  std::string normalize(std::string_view text) const override {
    std::size_t begin = 0, end = text.size();
    if (left_) {
      while (begin < end) {
        const auto [cp, length] = utf8::decode_at(text, begin);
        if (!utf8::is_white_space(cp)) break;
        begin += length;
      }
    }
    if (right_) {
      while (end > begin) {
        std::size_t start = end - 1;
        while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
        if (!utf8::is_white_space(utf8::decode_at(text, start).code_point)) break;
        end = start;
      }
    }
    return std::string(text.substr(begin, end - begin));
  }

 private:
  bool left_, right_;
};

class NormalizerSequence final : public Normalizer {
 public:
  explicit NormalizerSequence(std::vector<std::unique_ptr<Normalizer>> steps)
      : steps_(std::move(steps)) {}
  std::string normalize(std::string_view text) const override {
    std::string current(text);
    for (const auto& step : steps_) current = step->normalize(current);
    return current;
  }

 private:
  std::vector<std::unique_ptr<Normalizer>> steps_;
};

}  // namespace

std::unique_ptr<Normalizer> make_normalizer(const Json& spec, const JsonPath& where) {
  if (spec.is_null()) return nullptr;
  const std::string type = component_type(spec, where);
  using Form = UnicodeNormalization::Form;
  if (type == "NFC") return std::make_unique<UnicodeNormalization>(Form::kNfc, where);
  if (type == "NFD") return std::make_unique<UnicodeNormalization>(Form::kNfd, where);
  if (type == "NFKC") return std::make_unique<UnicodeNormalization>(Form::kNfkc, where);
  if (type == "NFKD") return std::make_unique<UnicodeNormalization>(Form::kNfkd, where);
  if (type == "Lowercase") return std::make_unique<Lowercase>();
  if (type == "Replace") return std::make_unique<ReplaceNormalizer>(spec, where);
  if (type == "Prepend") return std::make_unique<Prepend>(require_string(spec, "prepend", where));
  if (type == "Strip")
    return std::make_unique<StripNormalizer>(optional_value(spec, "strip_left", true, where),
                                             optional_value(spec, "strip_right", true, where));
  if (type == "Sequence") {
    const Json& list = require(spec, "normalizers", where);
    if (!list.is_array()) fail("{}: 'normalizers' must be an array", where.text);
    std::vector<std::unique_ptr<Normalizer>> steps;
    for (std::size_t i = 0; i < list.size(); ++i) {
      auto step = make_normalizer(list[i], where.field("normalizers").index(i));
      if (step) steps.push_back(std::move(step));
    }
    return std::make_unique<NormalizerSequence>(std::move(steps));
  }
  fail("{}: unsupported normalizer type '{}'", where.text, type);
}

}  // namespace glmrt::text
