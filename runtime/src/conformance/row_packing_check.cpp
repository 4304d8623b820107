// ABI 1.7: rows a kernels plugin packs in place for itself must multiply to
// exactly what the rows gave before: the host packs resident weights at load
// and every product of a run then reads them packed.
#include <glmrt/conformance/kernels_conformance.h>

#include "matmul_problem.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <bit>
#include <cstring>
#include <vector>

namespace glmrt::conformance {
namespace {

/// O off every group of 8 (a tail of unpacked rows), rows padded to 64
/// bytes apart, and one product large enough to be split among threads.
struct PackingShape {
  int64_t O, I;
  bool padded_rows;
};
constexpr PackingShape kPackingShapes[] = {{21, 512, false}, {19, 768, true}, {131, 2048, false}};

/// y of `view` rows [first, first + rows) for S rows of x, or an error.
std::string product(plugin::Kernels& kernels, const float* x, int64_t S, glmrt_weight_view view,
                    int64_t first, int64_t rows, std::vector<float>& y) {
  view.data = static_cast<const uint8_t*>(view.data) + first * view.row_stride_bytes;
  view.rows = rows;
  y.assign(static_cast<size_t>(S * rows), 0.0f);
  if (kernels.matmul(x, S, view, y.data()) != GLMRT_OK)
    return fmt::format("matmul of rows [{}, {}) failed: {}", first, first + rows,
                       kernels.last_error());
  return {};
}

/// Packs a copy of the problem's rows and compares every product with the
/// unpacked rows; returns what differs, or nothing.
std::string compare_packed(plugin::Kernels& kernels, const MatmulProblem& problem,
                           const glmrt_row_packing& offer) {
  const glmrt_weight_view plain = problem.view();
  const int64_t O = plain.rows, I = plain.cols, stride = plain.row_stride_bytes;
  const int64_t row_bytes = plugin::packed_row_bytes(plain.format.element_type, I);
  // A copy with the same row stride (padding included), packed in place.
  std::vector<uint8_t> bytes(static_cast<size_t>(O * stride));
  for (int64_t o = 0; o < O; ++o)
    std::memcpy(bytes.data() + o * stride, static_cast<const uint8_t*>(plain.data) + o * stride,
                static_cast<size_t>(row_bytes));
  const std::vector<uint8_t> before = bytes;
  if (kernels.pack_rows(plain.format, bytes.data(), O, I, stride) != GLMRT_OK)
    return fmt::format("pack_rows failed: {}", kernels.last_error());
  const int64_t group = offer.group_rows, whole = O / group * group;
  if (whole < O && std::memcmp(bytes.data() + whole * stride, before.data() + whole * stride,
                               static_cast<size_t>((O - whole) * stride)) != 0)
    return fmt::format("pack_rows changed the {} rows after the last whole group of {}", O - whole,
                       group);
  glmrt_weight_view packed = plain;
  packed.format.packing = offer.packing;
  packed.data = bytes.data();
  if (!kernels.supports(packed.format))
    return fmt::format("supports() refuses the packing {:#x} row_packing() offered", offer.packing);
  // The whole matrix, one group, and the rows from the last group's start.
  struct Rows {
    int64_t first, count;
  };
  std::vector<Rows> slices{{0, O}};
  if (O >= 2 * group) slices.push_back({group, group});
  if (whole > 0) slices.push_back({whole - group, O - (whole - group)});
  const float* x = problem.x().data();
  std::vector<float> want, got;
  for (const Rows& rows : slices)
    for (int64_t S = 1; S <= kMaxInvarianceRows; ++S) {
      if (std::string e = product(kernels, x, S, plain, rows.first, rows.count, want); !e.empty())
        return e;
      if (std::string e = product(kernels, x, S, packed, rows.first, rows.count, got); !e.empty())
        return "packed: " + e;
      for (size_t k = 0; k < want.size(); ++k)
        if (std::bit_cast<uint32_t>(got[k]) != std::bit_cast<uint32_t>(want[k]))
          return fmt::format(
              "rows [{}, {}), S={}: y[s={}, o={}] is {:.9g} packed but {:.9g} as stored",
              rows.first, rows.first + rows.count, S, static_cast<int64_t>(k) / rows.count,
              rows.first + static_cast<int64_t>(k) % rows.count, got[k], want[k]);
    }
  return {};
}

}  // namespace

CheckResult check_row_packing(plugin::Kernels& kernels, int abi_minor) {
  const std::string name = "packed rows give the products of the rows as stored (ABI 1.7)";
  if (abi_minor < GLMRT_ABI_MINOR_ROW_PACKING)
    return {name, Outcome::kSkip,
            fmt::format("ABI 1.{} predates row packing (1.{}): the host never asks", abi_minor,
                        GLMRT_ABI_MINOR_ROW_PACKING)};
  std::vector<std::string> packed_formats;
  uint64_t seed = 0x9AC4ED;
  for (const WeightFormatSpec& format : conformance_formats()) {
    if (plugin::is_ggml_blocks(format.element_type) && abi_minor < GLMRT_ABI_MINOR_GGML_TYPES)
      continue;
    if (!kernels.supports(format.to_format(1))) continue;
    for (const PackingShape& shape : kPackingShapes) {
      const int64_t I = format.fit_inputs(shape.I);
      const glmrt_row_packing offer = kernels.row_packing(format.to_format(1), I);
      if (offer.packing == 0) continue;
      if (offer.group_rows == 0)
        return {name, Outcome::kFail,
                fmt::format("{}: row_packing() offers packing {:#x} in groups of 0 rows",
                            format.name(), offer.packing)};
      const MatmulCase c{format, kMaxInvarianceRows,        shape.O,
                         I,      ActivationKind::kGaussian, shape.padded_rows,
                         ++seed};
      const MatmulProblem problem(c);
      if (std::string e = compare_packed(kernels, problem, offer); !e.empty())
        return {name, Outcome::kFail, fmt::format("{}: {}", c.name(), e)};
      if (packed_formats.empty() || packed_formats.back() != format.name())
        packed_formats.push_back(format.name());
    }
  }
  if (packed_formats.empty())
    return {name, Outcome::kSkip, "the plugin offers no packing for any format"};
  return {name, Outcome::kPass,
          fmt::format("{}: S = 1..{}, whole, one group and the tail, bit for bit",
                      fmt::join(packed_formats, ", "), kMaxInvarianceRows)};
}

}  // namespace glmrt::conformance
