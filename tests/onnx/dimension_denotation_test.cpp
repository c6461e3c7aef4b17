// Axis roles survive a trip through an ONNX file as dimension denotations, and what a file
// denotes is read back exactly or not at all.
#include "onnx/dimension_denotation.h"

#include <gtest/gtest.h>

#include "memledger/ir/graph.h"
#include "memledger/onnx/export.h"
#include "memledger/onnx/import.h"
#include "memledger/teaching/variants.h"

namespace memledger {
namespace {

using onnx_io::denotations_from_roles;
using onnx_io::roles_from_denotations;

AxisRoles roles(const std::string& text) { return *roles_from_string(text); }

TEST(DimensionDenotation, EveryRolePatternReadsBackExactlyOrNotAtAll) {
  const AxisRole all[] = {AxisRole::kN, AxisRole::kC, AxisRole::kH, AxisRole::kW, AxisRole::kOther};
  int exact = 0;
  for (int code = 0; code < 5 * 5 * 5 * 5; ++code) {
    AxisRoles r;
    for (int a = 0, c = code; a < 4; ++a, c /= 5) r.push_back(all[c % 5]);
    const AxisRoles back = roles_from_denotations(denotations_from_roles(r));
    ASSERT_EQ(back.size(), r.size());
    // Every role read back is the one written; N and C always come back when unique.
    for (size_t a = 0; a < r.size(); ++a) {
      if (back[a] != AxisRole::kOther) {
        EXPECT_EQ(back[a], r[a]) << roles_to_string(r);
      }
    }
    if (find_role(r, AxisRole::kN) && find_role(r, AxisRole::kC)) {
      EXPECT_EQ(find_role(back, AxisRole::kN), find_role(r, AxisRole::kN)) << roles_to_string(r);
      EXPECT_EQ(find_role(back, AxisRole::kC), find_role(r, AxisRole::kC)) << roles_to_string(r);
    }
    exact += back == r;
  }
  EXPECT_GT(exact, 100);
  EXPECT_EQ(roles_from_denotations(denotations_from_roles(roles("NCHW"))), roles("NCHW"));
  EXPECT_EQ(roles_from_denotations(denotations_from_roles(roles("NHWC"))), roles("NHWC"));
  EXPECT_EQ(roles_from_denotations(denotations_from_roles(roles("?C?"))), roles("?C?"));
  // H without W cannot be told apart from W: written as no denotation, read as unknown.
  EXPECT_EQ(roles_from_denotations(denotations_from_roles(roles("NCH?"))), roles("NC??"));
}

TEST(DimensionDenotation, InconsistentDenotationsStateNothing) {
  EXPECT_EQ(roles_from_denotations({"DATA_CHANNEL", "DATA_CHANNEL", "DATA_FEATURE"}), roles("???"));
  EXPECT_EQ(roles_from_denotations({"DATA_BATCH", "", "IMAGE_SOMETHING", "DATA_FEATURE"}), roles("N??W"));
}

TEST(DimensionDenotation, RolesSurviveExportWithoutAConvToStateThem) {
  // Mul + Add only: no operator states a role, so before denotations a written model came
  // back with every axis unknown and planned under another layout.
  const Graph g = teaching::expanded_mul_add_model();
  const Graph back = import_onnx_bytes(export_onnx_bytes(g));
  ASSERT_EQ(g.inputs().size(), back.inputs().size());
  const Value& x = g.value(g.inputs()[0]);
  ASSERT_EQ(roles_to_string(x.roles), "NCHW");
  EXPECT_EQ(roles_to_string(back.value(back.inputs()[0]).roles), "NCHW");
  EXPECT_EQ(roles_to_string(back.value(back.outputs()[0]).roles), "NCHW");
}

}  // namespace
}  // namespace memledger
