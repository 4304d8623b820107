#include "options.h"

#include <glmrt/base/error.h>

#include <iostream>

namespace glmrt::cli {

std::optional<boost::program_options::variables_map> parse_options(
    const Args& args, const boost::program_options::options_description& options) {
  namespace po = boost::program_options;
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(options).run(), vm);
  if (vm.count("help")) {
    std::cout << options;
    return std::nullopt;
  }
  po::notify(vm);
  return vm;
}

bool given(const boost::program_options::variables_map& vm, std::string_view name) {
  const auto it = vm.find(std::string(name));
  return it != vm.end() && !it->second.defaulted();
}

void refuse_together(const boost::program_options::variables_map& vm, std::string_view command,
                     std::string_view a, std::string_view b) {
  if (given(vm, a) && given(vm, b))
    fail("{}: --{} and --{} cannot be given together (one would be ignored); give one of them",
         command, a, b);
}

void require_with(const boost::program_options::variables_map& vm, std::string_view command,
                  std::string_view flag, std::string_view needed) {
  if (given(vm, flag) && !given(vm, needed))
    fail("{}: --{} applies only with --{} (without it, it would be ignored)", command, flag,
         needed);
}

}  // namespace glmrt::cli
