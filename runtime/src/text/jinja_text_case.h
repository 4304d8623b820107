// str.upper(), lower(), title() and capitalize() per code point (ICU's
// simple case mappings).
#pragma once

#include <string_view>

#include "jinja_value.h"

namespace glmrt::text::jinja {

// `how`: "upper", "lower", "title" or "capitalize". The result is marked
// wholly when any of `s` was.
Value change_case(const MarkedText& s, std::string_view how);

}  // namespace glmrt::text::jinja
