// The layout contract: fixed cases a person can check by hand, and properties over random
// shapes, bit widths, axis orders and alignments.
#include "memledger/core/layout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "memledger/core/error.h"

namespace memledger {
namespace {

const AxisRoles kNCHW{AxisRole::kN, AxisRole::kC, AxisRole::kH, AxisRole::kW};
const std::vector<int> kToNHWC{0, 2, 3, 1};

// Calls f(index) for every index of `shape` in row-major order.
template <typename F>
void for_each_index(const Shape& shape, F&& f) {
  if (element_count(shape) == 0) return;
  std::vector<int64_t> index(shape.size(), 0);
  while (true) {
    f(index);
    int axis = static_cast<int>(shape.size()) - 1;
    while (axis >= 0 && ++index[axis] == shape[axis]) index[axis--] = 0;
    if (axis < 0) return;
  }
}

TEST(Layout, TeachingInputNHWCPadsEachPixelTo16Bytes) {
  const Layout x({1, 12, 20, 28}, 8, kNCHW, kToNHWC, {16, AlignedRun::kInner, true});
  EXPECT_EQ(x.logical_bytes(), 6720);
  EXPECT_EQ(x.run_elements(), 12);
  EXPECT_EQ(x.run_bytes(), 16);
  EXPECT_EQ(x.runs(), 560);
  EXPECT_EQ(x.bytes(), 8960);
  EXPECT_EQ(x.physical_order_name(), "NHWC");
  EXPECT_EQ(x.run_name(), "pixel");
  // Channel c of pixel (h, w) sits at byte (h·28 + w)·16 + c.
  const std::vector<int64_t> index{0, 5, 3, 7};
  EXPECT_EQ(x.offset(index), (BitAddress{(3 * 28 + 7) * 16 + 5, 0}));
}

TEST(Layout, UnitChannelMergesIntoRowsOnlyWhenAsked) {
  const Layout rows({1, 1, 20, 28}, 8, kNCHW, kToNHWC, {16, AlignedRun::kInner, true});
  const Layout pixels({1, 1, 20, 28}, 8, kNCHW, kToNHWC, {16, AlignedRun::kInner, false});
  EXPECT_EQ(rows.bytes(), 640);
  EXPECT_EQ(rows.run_name(), "row");
  EXPECT_EQ(pixels.bytes(), 8960);
}

TEST(Layout, SubByteCountsBitsBeforeRounding) {
  const Layout packed({1, 1, 20, 28}, 4, kNCHW, kToNHWC, {16, AlignedRun::kInner, true});
  EXPECT_EQ(packed.run_bytes(), 16);  // 28 × 4 bits = 14 bytes → 16
  EXPECT_EQ(packed.bytes(), 320);
  const std::vector<int64_t> second{0, 0, 0, 1};
  EXPECT_EQ(packed.offset(second), (BitAddress{0, 4}));
  const Layout c12({1, 12, 20, 28}, 4, kNCHW, kToNHWC, {16, AlignedRun::kInner, true});
  EXPECT_EQ(c12.logical_bytes(), 3360);
  EXPECT_EQ(c12.bytes(), 8960);
}

TEST(Layout, WholeTensorRunAlignsOnlyTheBase) {
  const Layout host({1, 12, 20, 28}, 32, kNCHW, {}, {64, AlignedRun::kTensor, false});
  EXPECT_EQ(host.bytes(), 26880);  // 6720 × 4 = 26880, already a multiple of 64
  const Layout odd({3, 5}, 32, {}, {}, {64, AlignedRun::kTensor, false});
  EXPECT_EQ(odd.bytes(), 64);
  EXPECT_EQ(odd.logical_bytes(), 60);
}

// The channel axis is where the roles say, also when C equals H or W (P2).
TEST(Layout, ChannelAxisComesFromRolesNotFromSizes) {
  struct Case {
    Shape shape;
    int64_t pixel_bytes;
  };
  for (const Case& c : {Case{{1, 20, 16, 20}, 32}, Case{{1, 16, 16, 28}, 16}, Case{{1, 12, 20, 28}, 16}}) {
    const Layout x(c.shape, 8, kNCHW, kToNHWC, {16, AlignedRun::kInner, true});
    EXPECT_EQ(x.run_elements(), c.shape[1]) << shape_to_string(c.shape);
    EXPECT_EQ(x.run_bytes(), c.pixel_bytes) << shape_to_string(c.shape);
    EXPECT_EQ(x.bytes(), c.shape[2] * c.shape[3] * c.pixel_bytes);
    // Neighbouring channels are one element apart; neighbouring W positions one pixel.
    EXPECT_EQ(x.strides_bits()[1], 8);
    EXPECT_EQ(x.strides_bits()[3], c.pixel_bytes * 8);
    EXPECT_EQ(x.strides_bits()[2], c.pixel_bytes * 8 * c.shape[3]);
  }
  // The same C == W shape in NCHW: rows of W are the runs, C strides over whole planes.
  const Layout nchw({1, 20, 16, 20}, 8, kNCHW, {}, {16, AlignedRun::kInner, true});
  EXPECT_EQ(nchw.run_name(), "row");
  EXPECT_EQ(nchw.strides_bits()[1], 16 * 32 * 8);
}

TEST(Layout, OverflowingSizesAreUserErrors) {
  EXPECT_THROW(Layout({int64_t{1} << 40, int64_t{1} << 40}, 8, {}, {}, {}), Error);
  EXPECT_THROW(Layout({int64_t{1} << 58}, 64, {}, {}, {}), Error);  // bytes fit, bits don't
  EXPECT_THROW(Layout({-1, 4}, 8, {}, {}, {}), Error);
  EXPECT_THROW(Layout({4}, 0, {}, {}, {}), Error);
  EXPECT_THROW(Layout({4, 4}, 8, {}, {0, 0}, {}), Error);
}

TEST(Layout, EmptyAndScalarTensors) {
  const Layout empty({3, 0, 5}, 8, {}, {}, {16, AlignedRun::kInner, false});
  EXPECT_EQ(empty.bytes(), 0);
  EXPECT_EQ(empty.logical_bytes(), 0);
  const Layout scalar({}, 4, {}, {}, {16, AlignedRun::kInner, false});
  EXPECT_EQ(scalar.bytes(), 16);
  EXPECT_EQ(scalar.logical_bytes(), 1);
}

TEST(View, BroadcastHasZeroStridesAndRejectsMismatches) {
  const Layout scale({1, 12, 1, 1}, 8, kNCHW, kToNHWC, {16, AlignedRun::kInner, true});
  const View view = View::of(scale).broadcast_to({1, 12, 20, 28});
  EXPECT_TRUE(view.is_broadcast());
  EXPECT_EQ(view.strides_bits()[2], 0);
  EXPECT_EQ(view.strides_bits()[3], 0);
  EXPECT_EQ(view.strides_bits()[1], 8);
  EXPECT_FALSE(View::of(scale).is_broadcast());
  EXPECT_THROW(View::of(scale).broadcast_to({1, 20, 16, 20}), Error);
}

struct RandomLayout {
  Layout layout;
  std::string description;
};

RandomLayout random_layout(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> rank_dist(0, 5), extent_dist(0, 5), bits_dist(1, 64), coin(0, 1);
  const std::vector<int> common_bits{1, 2, 4, 8, 16, 32, 64};
  const std::vector<int64_t> alignments{1, 2, 3, 4, 8, 16, 64};
  Shape shape(rank_dist(rng));
  for (auto& e : shape) e = extent_dist(rng) == 0 ? 1 : extent_dist(rng) + 1;  // mostly > 0; zero below
  if (!shape.empty() && std::uniform_int_distribution<int>(0, 30)(rng) == 0) shape[0] = 0;
  const int bits = coin(rng) ? common_bits[rng() % common_bits.size()] : bits_dist(rng);
  std::vector<int> order(shape.size());
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  const LayoutRules rules{alignments[rng() % alignments.size()], coin(rng) ? AlignedRun::kInner : AlignedRun::kTensor,
                          coin(rng) == 1};
  std::string description = "shape " + shape_to_string(shape) + " bits " + std::to_string(bits) + " order";
  for (int a : order) description += " " + std::to_string(a);
  description += " align " + std::to_string(rules.alignment_bytes) +
                 (rules.aligned_run == AlignedRun::kTensor ? " tensor" : " inner") +
                 (rules.unit_inner_merge ? " merge" : "");
  return {Layout(shape, bits, {}, order, rules), description};
}

TEST(LayoutProperty, ElementsLieInsideBytesAndNeverShareABit) {
  std::mt19937_64 rng(20261130);
  for (int trial = 0; trial < 3000; ++trial) {
    const auto [layout, description] = random_layout(rng);
    SCOPED_TRACE(description);
    std::vector<std::pair<int64_t, int64_t>> spans;  // [begin, end) in bits
    for_each_index(layout.shape(), [&](const std::vector<int64_t>& index) {
      const int64_t begin = layout.offset(index).in_bits();
      spans.emplace_back(begin, begin + layout.element_bits());
    });
    ASSERT_EQ(static_cast<int64_t>(spans.size()), layout.elements());
    std::sort(spans.begin(), spans.end());
    for (size_t i = 0; i < spans.size(); ++i) {
      ASSERT_GE(spans[i].first, 0);
      ASSERT_LE(spans[i].second, layout.bytes() * 8) << "element outside bytes()";
      if (i > 0) {
        ASSERT_LE(spans[i - 1].second, spans[i].first) << "two elements share a bit";
      }
    }
  }
}

TEST(LayoutProperty, BytesAreRunsTimesAlignedRun) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 3000; ++trial) {
    const auto [layout, description] = random_layout(rng);
    SCOPED_TRACE(description);
    const int64_t a = layout.rules().alignment_bytes;
    const int64_t raw = (layout.run_elements() * layout.element_bits() + 7) / 8;
    EXPECT_EQ(layout.run_bytes(), (raw + a - 1) / a * a);
    EXPECT_EQ(layout.run_bytes() % a, 0);
    EXPECT_EQ(layout.bytes(), layout.runs() * layout.run_bytes());
    EXPECT_EQ(layout.runs() * layout.run_elements(), layout.elements());
    EXPECT_GE(layout.bytes(), layout.logical_bytes());
  }
}

TEST(LayoutProperty, BroadcastViewRepeatsExactlyAlongZeroStrideAxes) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 1000; ++trial) {
    const auto [layout, description] = random_layout(rng);
    SCOPED_TRACE(description);
    if (layout.elements() == 0) continue;
    // Grow every unit axis and add up to two leading axes.
    Shape target = layout.shape();
    for (auto& e : target)
      if (e == 1 && rng() % 2) e = 1 + static_cast<int64_t>(rng() % 3);
    const int lead = static_cast<int>(rng() % 3);
    for (int i = 0; i < lead; ++i) target.insert(target.begin(), 1 + static_cast<int64_t>(rng() % 3));
    const View view = View::of(layout).broadcast_to(target);
    for_each_index(target, [&](const std::vector<int64_t>& index) {
      std::vector<int64_t> source(index.begin() + lead, index.end());
      for (size_t i = 0; i < source.size(); ++i)
        if (layout.shape()[i] == 1) source[i] = 0;
      ASSERT_EQ(view.offset(index), layout.offset(source));
      for (size_t axis = 0; axis < target.size(); ++axis) {
        if (index[axis] == 0) continue;
        std::vector<int64_t> moved = index;
        moved[axis] = 0;
        const bool zero_stride = view.strides_bits()[axis] == 0;
        ASSERT_EQ(view.offset(moved) == view.offset(index), zero_stride) << "axis " << axis;
      }
    });
  }
}

}  // namespace
}  // namespace memledger
