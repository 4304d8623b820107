// Widening wanted byte ranges to an io plugin's alignment: offset down,
// length up, the wanted bytes at `lead`, and at the end of a file a read that
// may stop short (`expected`), on offsets as safetensors files have them.
#include <glmrt/base/error.h>
#include <glmrt/experts/widened_read.h>

#include <gtest/gtest.h>

namespace glmrt {
namespace {

// A shard of glm_tiny: an 8-byte length and a header of 10576 bytes put the
// data at 10584; tensors follow back to back at offsets no block size divides.
constexpr uint64_t kFile = 1063344;

TEST(WidenedRead, RoundsOffsetDownAndLengthUp) {
  const WidenedRead w = widen_read(10584 + 24576, 8192, 4096, kFile);
  EXPECT_EQ(w.offset, 32768u);
  EXPECT_EQ(w.lead, 10584u + 24576u - 32768u);
  EXPECT_EQ(w.length % 4096, 0u);
  EXPECT_GE(w.offset + w.length, 10584u + 24576u + 8192u);
  EXPECT_LT(w.length - (w.lead + 8192), 4096u);  // no more than one block of slack
  EXPECT_EQ(w.expected, w.length);
}

TEST(WidenedRead, AlignedRangeIsLeftAlone) {
  const WidenedRead w = widen_read(8192, 4096, 4096, kFile);
  EXPECT_EQ(w.offset, 8192u);
  EXPECT_EQ(w.lead, 0u);
  EXPECT_EQ(w.length, 4096u);
}

TEST(WidenedRead, AlignmentOneChangesNothing) {
  const WidenedRead w = widen_read(10585, 77, 1, kFile);
  EXPECT_EQ(w.offset, 10585u);
  EXPECT_EQ(w.lead, 0u);
  EXPECT_EQ(w.length, 77u);
  EXPECT_EQ(w.expected, 77u);
}

TEST(WidenedRead, TensorEndingAtAnUnalignedEndOfFileExpectsAShortRead) {
  // The shard's last tensor ends at its last byte (1063344 = 259 * 4096 + 2480).
  const uint64_t length = 24576;
  const WidenedRead w = widen_read(kFile - length, length, 4096, kFile);
  EXPECT_EQ(w.offset % 4096, 0u);
  EXPECT_EQ(w.length % 4096, 0u);
  EXPECT_GT(w.offset + w.length, kFile);    // O_DIRECT needs the whole last block asked for
  EXPECT_EQ(w.expected, kFile - w.offset);  // the file ends first: that many bytes come back
  EXPECT_EQ(w.lead + length, w.expected);
}

TEST(WidenedRead, LastByteOfAFile) {
  const WidenedRead w = widen_read(kFile - 1, 1, 512, kFile);
  EXPECT_EQ(w.offset, kFile / 512 * 512);
  EXPECT_EQ(w.length, 512u);
  EXPECT_EQ(w.expected, kFile - w.offset);
}

TEST(WidenedRead, RangesOutsideTheFileAndBadAlignmentsAreRefused) {
  EXPECT_THROW(widen_read(kFile - 10, 11, 4096, kFile), Error);
  EXPECT_THROW(widen_read(kFile + 1, 0, 4096, kFile), Error);
  EXPECT_THROW(widen_read(0, 10, 3000, kFile), Error);
  EXPECT_THROW(widen_read(0, 10, 0, kFile), Error);
  EXPECT_NO_THROW(widen_read(kFile, 0, 4096, kFile));
}

}  // namespace
}  // namespace glmrt
