// The operators named outside the op table (ir/op_names.h) are all records of it, so a
// pattern or kernel table keyed by one cannot name an operator the table does not hold.
#include "memledger/ir/op_names.h"

#include <gtest/gtest.h>

#include <set>

#include "memledger/ir/op_table.h"

namespace memledger {
namespace {

TEST(OpNames, EveryNamedOperatorIsARecordOfTheOpTable) {
  std::set<std::string_view> seen;
  for (std::string_view name : op::named_ops()) {
    EXPECT_NE(find_op("", name), nullptr) << name;
    EXPECT_TRUE(seen.insert(name).second) << name << " named twice";
  }
  EXPECT_GT(seen.size(), 20u);
  EXPECT_EQ(op::kConv, "Conv");  // the constant is the operator's own spelling
}

}  // namespace
}  // namespace memledger
