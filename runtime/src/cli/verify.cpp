// glmrt verify DIR: checks a converted container (checksums, headers, stamps,
// expert layouts).
#include "commands.h"

#include <glmrt/base/error.h>
#include <glmrt/convert/container_verify.h>

#include <fmt/format.h>

namespace glmrt::cli {

int verify_command(const Args& args) {
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    fmt::print(
        "usage: glmrt verify DIR\n  checks a container written by glmrt convert: every file's "
        "size and XXH3-64 against checksums.json, every header and format stamp, and the "
        "routed experts' tensors against config.json\n");
    return 0;
  }
  if (args.size() != 1) fail("usage: glmrt verify DIR");
  const VerifyResult r = verify_container(args[0]);
  fmt::print("{}: OK, {} files, {:.3f} GB, {} tensors (checked in {:.1f} s)\n", args[0], r.files,
             r.bytes / 1e9, r.tensors, r.seconds);
  return 0;
}

}  // namespace glmrt::cli
