#include "options.h"

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

}  // namespace glmrt::cli
