// Pins every layout figure of DESIGN.md §5 as the library computes it.
#include "memledger/teaching/example.h"

#include <gtest/gtest.h>

namespace memledger {
namespace {

TEST(TeachingExample, LayoutFiguresOfTheDesign) {
  const auto f = teaching::layout_figures(builtin_profile("teaching"));
  EXPECT_EQ(f.parameter_elements_compact, 24);
  EXPECT_EQ(f.parameter_elements_expanded, 13440);
  EXPECT_EQ(f.x.logical_bytes(), 6720);
  EXPECT_EQ(f.x.bytes(), 8960);
  EXPECT_EQ(f.parameter_compact.bytes(), 16);
  EXPECT_EQ(f.parameter_expanded.bytes(), 8960);
  EXPECT_EQ(f.c1_row_rule.bytes(), 640);
  EXPECT_EQ(f.c1_pixel_rule.bytes(), 8960);
  EXPECT_EQ(f.int4_c1_packed.bytes(), 320);
  EXPECT_EQ(f.int4_c1_per_element.bytes(), 640);
  EXPECT_EQ(f.int4_c12.logical_bytes(), 3360);
  EXPECT_EQ(f.int4_c12.bytes(), 8960);
}

TEST(TeachingExample, HostProfileKeepsFloat32AndAlignsOnlyBases) {
  const auto f = teaching::layout_figures(builtin_profile("host"));
  EXPECT_EQ(f.x.bytes(), 26880);
  EXPECT_EQ(f.parameter_compact.bytes(), 64);  // 12 × 4 = 48 bytes → one 64-byte base
  EXPECT_EQ(f.c1_row_rule.bytes(), f.c1_pixel_rule.bytes());
}

}  // namespace
}  // namespace memledger
