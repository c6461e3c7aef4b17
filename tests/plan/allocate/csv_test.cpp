#include "memledger/plan/allocate/csv.h"

#include <gtest/gtest.h>

#include "memledger/core/error.h"
#include "memledger/plan/allocate/lower_bound.h"
#include "memledger/plan/allocate/naive.h"

namespace memledger::allocate {
namespace {

std::string error_of(std::string_view text) {
  try {
    parse_problem_csv(text, "p.csv");
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::kBadInput);
    return e.what();
  }
  return "no error";
}

TEST(AllocateCsv, ReadsRowsWithAndWithoutHeader) {
  const Problem with_header = parse_problem_csv("id,lower,upper,size\na,0,3,16\n\nb,1,2,8\r\n", "p.csv");
  ASSERT_EQ(with_header.buffers.size(), 2u);
  EXPECT_EQ(with_header.buffers[1].id, "b");
  EXPECT_EQ(with_header.buffers[1].lower, 1);
  EXPECT_EQ(with_header.buffers[1].upper, 2);
  EXPECT_EQ(with_header.buffers[1].size, 8);
  EXPECT_FALSE(with_header.buffers[1].fixed_offset);
  const Problem bare = parse_problem_csv("a, 0, 3, 16", "p.csv");
  EXPECT_EQ(bare.buffers[0].size, 16);
  // MiniMalloc's older header: its `end` is the last step the buffer lives (inclusive), so a
  // buffer may start and end at one step.
  const Problem renamed = parse_problem_csv("buffer,start,end,size\n0,995328,1000448,656384\n1,7,7,4\n", "p.csv");
  ASSERT_EQ(renamed.buffers.size(), 2u);
  EXPECT_EQ(renamed.buffers[0].id, "0");
  EXPECT_EQ(renamed.buffers[0].lower, 995328);
  EXPECT_EQ(renamed.buffers[0].upper, 1000449);
  EXPECT_EQ(renamed.buffers[0].size, 656384);
  EXPECT_EQ(renamed.buffers[1].lower, 7);
  EXPECT_EQ(renamed.buffers[1].upper, 8);
}

TEST(AllocateCsv, InclusiveEndsKeepBuffersThatMeetAtAStepApart) {
  // b1 ends at step 3 and b2 starts there: in the `start,end` form they are both live at step 3
  // and may not share bytes; in the `lower,upper` form b1 is gone at step 3.
  const std::string rows = "b1,0,3,4\nb2,3,9,4\n";
  const Problem inclusive = parse_problem_csv("buffer,start,end,size\n" + rows, "p.csv");
  const Problem exclusive = parse_problem_csv("id,lower,upper,size\n" + rows, "p.csv");
  EXPECT_EQ(plan_naive(inclusive).arena_bytes, 8);
  EXPECT_EQ(lower_bound(inclusive).bytes, 8);
  EXPECT_EQ(lower_bound(exclusive).bytes, 4);
}

TEST(AllocateCsv, OffsetColumnFixesOffsetsWhenFilled) {
  const Problem p = parse_problem_csv("id,lower,upper,size,offset\na,0,3,16,32\nb,1,2,8,\n", "p.csv");
  EXPECT_EQ(p.buffers[0].fixed_offset, 32);
  EXPECT_FALSE(p.buffers[1].fixed_offset);
}

TEST(AllocateCsv, ErrorsNameTheFileAndLine) {
  EXPECT_EQ(error_of("id,lower,upper,size\na,0,3\n"),
            "p.csv:2: expected 4 or 5 fields (id,lower,upper,size[,offset]), found 3");
  EXPECT_EQ(error_of("a,0,3,1\nb,x,3,1\n"), "p.csv:2: lower 'x' is not an integer");
  EXPECT_EQ(error_of("a,0,3,1.5\n"), "p.csv:1: size '1.5' is not an integer");
  EXPECT_EQ(error_of("a,0,3,99999999999999999999\n"), "p.csv:1: size '99999999999999999999' is not an integer");
  EXPECT_EQ(error_of("a,0,3,-4\n"), "p.csv:1: size -4 of 'a' is negative");
  EXPECT_EQ(error_of("a,3,3,4\n"), "p.csv:1: lower 3 of 'a' must be less than upper 3 (upper is exclusive)");
  EXPECT_EQ(error_of("a,0,3,4\n\nb,0,1,1\na,1,2,4\n"), "p.csv:4: duplicate id 'a' (first on line 1)");
  EXPECT_EQ(error_of("a,0,3,4\nb,0,1,1,0\n"), "p.csv:2: expected 4 fields like the rows above, found 5");
  EXPECT_EQ(error_of("buffer,start,end,size\nb,5,4,8\n"),
            "p.csv:2: start 5 of 'b' must not be after end 4 (end is inclusive)");
  EXPECT_EQ(error_of("buffer,start,end,size\nb,0,9223372036854775807,8\n"),
            "p.csv:2: end 9223372036854775807 of 'b' is the largest 64-bit integer: one past it overflows");
  EXPECT_EQ(error_of("id,start,end,size\n"),
            "p.csv:1: the header must be 'id,lower,upper,size[,offset]' or 'buffer,start,end,size[,offset]'");
  EXPECT_EQ(error_of(",0,3,4\n"), "p.csv:1: the id is empty");
  EXPECT_EQ(error_of("a,0,3,4,-8\n"), "p.csv:1: offset -8 of 'a' is negative");
  EXPECT_EQ(error_of("a,0,3,9223372036854775807,1\n"),
            "p.csv:1: offset 1 + size 9223372036854775807 of 'a' overflows 64 bits");
  EXPECT_EQ(error_of("a,0,3,9223372036854775807\nb,0,3,9223372036854775807\n"),
            "p.csv: the buffers' total size overflows 64 bits (at buffer 'b')");
}

TEST(AllocateCsv, SolutionRoundTrips) {
  const Problem p = parse_problem_csv("a,0,3,16\nb,1,2,8\n", "p.csv");
  const Solution s = plan_naive(p);
  const std::string text = format_solution_csv(p, s);
  EXPECT_EQ(text, "id,lower,upper,size,offset\na,0,3,16,0\nb,1,2,8,16\n");
  const Problem again = parse_problem_csv(text, "solution.csv");
  EXPECT_EQ(again.buffers[1].fixed_offset, 16);
}

TEST(AllocateCsv, MissingFileIsABadInputError) { EXPECT_THROW(read_problem_csv("/nonexistent/problem.csv"), Error); }

}  // namespace
}  // namespace memledger::allocate
