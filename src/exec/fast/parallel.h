// The fast set's own loops (the integer elementwise and pooling loops, QuantizeLinear, the
// exact f32 Conv's conversions, SiLU) on the threads a run was given: set_threads (called as
// a run starts) sets OpenMP's count on the running thread, and these loops split their
// elements into that many contiguous ranges, as oneDNN's primitives split theirs. Every loop
// split here computes each element from its own inputs alone, in the same operations
// whatever the split, so a run on N threads gives one thread's bits. Internal to exec/fast.
#pragma once

#include <cstdint>
#include <functional>

namespace memledger::exec::fast {

// The threads a loop of `count` elements takes: one where the run has one or where the
// elements are under two `grain`s (a parallel region costs microseconds; a grain should be
// that much work), else at most one per grain, and at most `cap` (a loop whose per-thread
// rows were planned for that many).
int loop_threads(int64_t count, int64_t grain, int cap = 1 << 30);

// The grain of the own element loops: 16 K elements (of an 8-bit loop, 16 K bytes) take a few
// microseconds, about what a parallel region costs to start. A multiple of 16, so a range of a
// vector loop (SiLU's) holds whole vectors.
inline constexpr int64_t kLoopGrain = 16384;

// body(begin, end, thread) over [0, count) in contiguous ranges, one per thread (thread in
// [0, loop_threads(count, grain, cap))); each range's bounds are multiples of `grain` but the
// last's end. One range runs on the calling thread, without a parallel region. The body must
// not throw.
void parallel_ranges(int64_t count, int64_t grain, const std::function<void(int64_t, int64_t, int)>& body,
                     int cap = 1 << 30);

}  // namespace memledger::exec::fast
