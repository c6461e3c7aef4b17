// Conv weights get axis roles from the operator (the input-channel axis is C, the window's
// axes H and W; a depthwise Conv's channel is its map axis), so a profile's NHWC order
// stores them as TFLite does: [M,kH,kW,C] and [1,kH,kW,M], channels innermost and packed.
#include <gtest/gtest.h>

#include "memledger/device/profile.h"
#include "memledger/device/tensor_layout.h"
#include "memledger/ir/axis_roles.h"
#include "memledger/ir/graph.h"

namespace memledger {
namespace {

const AxisRoles kNCHW{AxisRole::kN, AxisRole::kC, AxisRole::kH, AxisRole::kW};

// x [1,C,8,8] → Conv(w [M, C/group, 3, 3], group) → y.
struct ConvModel {
  Graph g;
  ValueId w;
};

ConvModel conv_model(int64_t channels, int64_t maps, int64_t group) {
  ConvModel m;
  const ValueId x = m.g.add_input({.name = "x", .dtype = DType::kFloat32, .shape = {1, channels, 8, 8}});
  m.w = m.g.add_constant("w", Tensor(DType::kFloat32, {maps, channels / group, 3, 3}));
  const ValueId y = m.g.add_value({.name = "y", .shape = {1, maps, 8, 8}});
  m.g.add_node({.name = "conv",
                .op = "Conv",
                .inputs = {x, m.w},
                .outputs = {y},
                .attributes = {{"group", group}, {"pads", std::vector<int64_t>{1, 1, 1, 1}}}});
  m.g.mark_output(y);
  infer_axis_roles(m.g);
  return m;
}

TEST(ConvWeightRoles, InputChannelAxisIsCWindowAxesAreHW) {
  const ConvModel m = conv_model(8, 16, 1);
  EXPECT_EQ(roles_to_string(m.g.value(m.w).roles), "?CHW");
  EXPECT_EQ(roles_to_string(m.g.value(m.g.inputs()[0]).roles), "NCHW");
}

TEST(ConvWeightRoles, DepthwiseChannelIsTheMapAxis) {
  const ConvModel m = conv_model(16, 16, 16);
  EXPECT_EQ(roles_to_string(m.g.value(m.w).roles), "C?HW");
}

TEST(ConvWeightRoles, NhwcProfileStoresChannelsInnermost) {
  // teaching: int8 storage, NHWC, 16-byte aligned innermost runs.
  const DeviceProfile teaching = builtin_profile("teaching");
  const ConvModel dense = conv_model(16, 32, 1);
  const Value& w = dense.g.value(dense.w);
  // [32,3,3,16] int8: every 16-channel run is exactly 16 B, nothing padded.
  EXPECT_EQ(tensor_layout(teaching, w.shape, w.dtype, w.roles).bytes(), 32 * 3 * 3 * 16);
  // Without roles the 3-wide kernel rows would each pad to 16 B: 32·16·3 runs.
  EXPECT_EQ(tensor_layout(teaching, w.shape, w.dtype, unknown_roles(4)).bytes(), 32 * 16 * 3 * 16);

  const ConvModel depthwise = conv_model(32, 32, 32);
  const Value& dw = depthwise.g.value(depthwise.w);
  // [1,3,3,32] int8: two 16-byte runs per tap.
  EXPECT_EQ(tensor_layout(teaching, dw.shape, dw.dtype, dw.roles).bytes(), 3 * 3 * 32);
}

}  // namespace
}  // namespace memledger
