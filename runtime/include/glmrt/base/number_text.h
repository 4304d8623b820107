// Numbers in messages as a user types them: a whole number in full
// ("1048576", where fmt's {:g} says "1.04858e+06"), anything else in fmt's
// shortest form that reads back as the same double.
#pragma once

#include <string>

namespace glmrt {

std::string number_text(double value);

}  // namespace glmrt
