// glmrt verify DIR: checks a converted container as loading would (checksums,
// headers, stamps, config, tensor shapes, finite values).
#include "commands.h"

#include <glmrt/base/error.h>
#include <glmrt/convert/container_verify.h>

#include <fmt/format.h>

namespace glmrt::cli {

int verify_command(const Args& args) {
  if (args.size() == 1 && (args[0] == "--help" || args[0] == "-h")) {
    fmt::print(
        "usage: glmrt verify DIR\n  checks a container written by glmrt convert as loading "
        "checks it: every file's size and XXH3-64 against checksums.json, every header and "
        "format stamp, config.json, every tensor's shape, dtype and scales against it, the "
        "routed experts' layout, and finite values in every stored tensor\n");
    return 0;
  }
  if (args.size() != 1) fail("usage: glmrt verify DIR");
  const VerifyResult r = verify_container(args[0]);
  fmt::print("{}: OK, {} files, {:.3f} GB, {} tensors (checked in {:.1f} s)\n", args[0], r.files,
             r.bytes / 1e9, r.tensors, r.seconds);
  return 0;
}

}  // namespace glmrt::cli
