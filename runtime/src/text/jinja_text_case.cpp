#include "jinja_text_case.h"

#include <unicode/uchar.h>

#include "utf8.h"

namespace glmrt::text::jinja {

Value change_case(const MarkedText& s, std::string_view how) {
  MarkedText out;
  out.marks = s.marks;
  bool previous_cased = false;
  bool first = true;
  for (std::size_t pos = 0; pos < s.text.size();) {
    const auto [cp, length] = utf8::decode_at(s.text, pos);
    pos += length;
    const auto c = static_cast<UChar32>(cp);
    UChar32 mapped = c;
    if (how == "upper") {
      mapped = u_toupper(c);
    } else if (how == "lower") {
      mapped = u_tolower(c);
    } else if (how == "capitalize") {
      mapped = first ? u_totitle(c) : u_tolower(c);
    } else {  // title: a cased letter after an uncased one starts a word
      mapped = previous_cased ? u_tolower(c) : u_totitle(c);
      previous_cased = u_hasBinaryProperty(c, UCHAR_CASED) != 0;
    }
    first = false;
    utf8::append(out.text, static_cast<char32_t>(mapped));
  }
  out.mark_all_if_any();
  return out;
}

}  // namespace glmrt::text::jinja
