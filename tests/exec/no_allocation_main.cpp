// No allocations during a run outside the arena (issue 15 item 3): this binary replaces the
// global operator new and counts every heap allocation made while an Executor runs a
// model inside its planned arena (PlannedArena: every value and workspace at its planned
// offset), after a warm-up run. memledger's own code (the executor, the fast kernels'
// bindings, the reference kernels on nodes the fast set does not take) must allocate
// nothing; oneDNN's execute call keeps a few small blocks of argument bookkeeping per
// primitive (its C API builds a hash map of the arguments), which are counted apart and
// must stay small: no data-sized buffer is ever allocated behind the plan's back.
// A separate binary (not memledger_tests) because the replaced operator new is global.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <new>

#include "corpus.h"
#include "exec/fast/prepared_node.h"
#include "memledger/exec/arena_run.h"
#include "memledger/exec/executor.h"
#include "memledger/exec/planned_arena.h"
#include "memledger/onnx/import.h"

namespace {

std::atomic<bool> counting{false};
// Made by memledger's code / inside oneDNN's execute, and the largest of the latter.
std::atomic<long> own_allocations{0}, onednn_allocations{0}, onednn_bytes{0}, onednn_largest{0};

void count(std::size_t size) {
  if (!counting.load(std::memory_order_relaxed)) return;
  if (memledger::exec::fast::onednn_call_depth() > 0) {
    ++onednn_allocations;
    onednn_bytes += static_cast<long>(size);
    long largest = onednn_largest.load();
    while (static_cast<long>(size) > largest &&
           !onednn_largest.compare_exchange_weak(largest, static_cast<long>(size))) {
    }
  } else {
    ++own_allocations;
  }
}

void* allocate(std::size_t size) {
  count(size);
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}

void* allocate_aligned(std::size_t size, std::align_val_t align) {
  count(size);
  const auto a = static_cast<std::size_t>(align);
  if (void* p = std::aligned_alloc(a, (size + a - 1) / a * a)) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(std::size_t size) { return allocate(size); }
void* operator new[](std::size_t size) { return allocate(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  count(size);
  return std::malloc(size ? size : 1);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  count(size);
  return std::malloc(size ? size : 1);
}
void* operator new(std::size_t size, std::align_val_t align) { return allocate_aligned(size, align); }
void* operator new[](std::size_t size, std::align_val_t align) { return allocate_aligned(size, align); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { std::free(p); }

namespace memledger {
namespace {

namespace fs = std::filesystem;

struct Counts {
  long own = 0, onednn = 0, onednn_bytes = 0, onednn_largest = 0;
};

// Warm-up, then one counted run of `graph` inside its plan.
Counts counted_run(const Graph& graph, const ExecOptions& exec) {
  const MemoryPlan plan = plan_for_kernels(graph, builtin_profile("host"), exec);
  Executor executor(graph, exec);
  PlannedArena arena(graph, plan);
  const std::vector<Tensor> inputs = random_inputs(graph, 3);
  std::vector<Tensor> outputs = executor.make_outputs();
  executor.run_into(inputs, outputs, arena);  // warm-up: oneDNN's lazy kernel generation
  own_allocations = onednn_allocations = onednn_bytes = onednn_largest = 0;
  counting = true;
  executor.run_into(inputs, outputs, arena);
  counting = false;
  return {own_allocations.load(), onednn_allocations.load(), onednn_bytes.load(), onednn_largest.load()};
}

// Conv → Relu → MaxPool → (Conv → Add residual) → GlobalAveragePool → Flatten → Gemm →
// Softmax, with depthwise and grouped Convs: what the corpus CNNs are made of.
Graph small_cnn() {
  Graph g;
  auto filled = [](Shape shape, float step) {
    Tensor t(DType::kFloat32, std::move(shape));
    for (int64_t i = 0; i < t.elements(); ++i) t.data<float>()[i] = step * static_cast<float>(i % 13 - 6);
    return t;
  };
  auto value = [&](const char* name, Shape shape) { return g.add_value({.name = name, .shape = std::move(shape)}); };
  const ValueId x = g.add_input({.name = "x", .shape = {1, 3, 32, 32}});
  const ValueId c1 = value("c1", {1, 16, 16, 16}), r1 = value("r1", {1, 16, 16, 16}), p1 = value("p1", {1, 16, 8, 8});
  g.add_node(
      {.name = "conv1",
       .op = "Conv",
       .inputs = {x, g.add_constant("w1", filled({16, 3, 3, 3}, 0.05f)), g.add_constant("b1", filled({16}, 0.1f))},
       .outputs = {c1},
       .attributes = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"strides", std::vector<int64_t>{2, 2}}}});
  g.add_node({.name = "relu1", .op = "Relu", .inputs = {c1}, .outputs = {r1}});
  g.add_node({.name = "pool",
              .op = "MaxPool",
              .inputs = {r1},
              .outputs = {p1},
              .attributes = {{"kernel_shape", std::vector<int64_t>{2, 2}}, {"strides", std::vector<int64_t>{2, 2}}}});
  const ValueId dw = value("dw", {1, 16, 8, 8}), gc = value("gc", {1, 16, 8, 8}), sum = value("sum", {1, 16, 8, 8});
  g.add_node({.name = "depthwise",
              .op = "Conv",
              .inputs = {p1, g.add_constant("wd", filled({16, 1, 3, 3}, 0.1f))},
              .outputs = {dw},
              .attributes = {{"pads", std::vector<int64_t>{1, 1, 1, 1}}, {"group", int64_t{16}}}});
  g.add_node({.name = "grouped",
              .op = "Conv",
              .inputs = {dw, g.add_constant("wg", filled({16, 4, 1, 1}, 0.1f))},
              .outputs = {gc},
              .attributes = {{"group", int64_t{4}}}});
  g.add_node({.name = "add", .op = "Add", .inputs = {gc, p1}, .outputs = {sum}});
  const ValueId gap = value("gap", {1, 16, 1, 1}), flat = value("flat", {1, 16}), logits = value("logits", {1, 10});
  const ValueId y = value("y", {1, 10});
  g.add_node({.name = "gap", .op = "GlobalAveragePool", .inputs = {sum}, .outputs = {gap}});
  g.add_node({.name = "flatten", .op = "Flatten", .inputs = {gap}, .outputs = {flat}});
  g.add_node({.name = "fc",
              .op = "Gemm",
              .inputs = {flat, g.add_constant("fw", filled({10, 16}, 0.02f)), g.add_constant("fb", filled({10}, 0.1f))},
              .outputs = {logits},
              .attributes = {{"transB", int64_t{1}}}});
  g.add_node({.name = "softmax", .op = "Softmax", .inputs = {logits}, .outputs = {y}});
  g.mark_output(y);
  return g;
}

void expect_no_own_allocations(const Graph& graph, const std::string& name) {
  for (bool prepack : {true, false}) {
    const ExecOptions exec{.kernels = KernelSet::kFast, .threads = 1, .prepack_weights = prepack};
    Executor probe(graph, exec);
    const Counts c = counted_run(graph, exec);
    std::printf("%-28s %-8s %s: memledger %ld allocations; inside oneDNN's execute %ld (%ld B, largest %ld B)\n",
                name.c_str(), prepack ? "prepack" : "per-run", probe.summary().c_str(), c.own, c.onednn, c.onednn_bytes,
                c.onednn_largest);
    if (probe.fast_node_count() == static_cast<int>(graph.order().size())) {
      EXPECT_EQ(c.own, 0) << name;
    }
    EXPECT_LE(c.onednn_largest, 4096) << name << ": a data-sized allocation inside oneDNN";
    EXPECT_LE(c.onednn_bytes, 4096L * static_cast<long>(graph.order().size()) * 4) << name;
  }
}

TEST(NoAllocation, SmallCnnRunsInItsArenaWithoutAllocating) {
  const Graph g = small_cnn();
  ASSERT_EQ(Executor(g).fast_node_count(), static_cast<int>(g.order().size())) << Executor(g).summary();
  expect_no_own_allocations(g, "small_cnn");
}

// The reference kernels (every node) allocate small index vectors of their own: counted,
// so that the figure is known, not required to be zero.
TEST(NoAllocation, ReferenceKernelsAllocationsAreCounted) {
  const Graph g = small_cnn();
  const Counts c = counted_run(g, {.kernels = KernelSet::kReference});
  std::printf("small_cnn reference kernels: %ld allocations\n", c.own);
  EXPECT_EQ(c.onednn, 0);
}

TEST(NoAllocation, CorpusModelsRunInTheirArenaWithoutAllocating) {
  ML_CORPUS_DIR_OR_SKIP(dir);
  int models = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".onnx") continue;
    ++models;
    expect_no_own_allocations(import_onnx_file(entry.path().string()), entry.path().filename().string());
  }
  EXPECT_GT(models, 0);
}

}  // namespace
}  // namespace memledger
