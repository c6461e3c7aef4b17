// The transformers of the sweep's CI subset (torchvision's vit_b_16 and swin_t, exported by
// torch.onnx at its defaults) on the fast set: their LayerNorms come as ReduceMean, Sub, Pow(2),
// Add, Sqrt, Div and their GELUs as Div, Erf, Add, Mul, Mul (ir/erf_gelu.h): every Pow runs fast
// and every GELU as one, and vit_b_16 leaves at most 2 % of its nodes to the reference kernels
// (issue 38's target for the corpus CNNs, held here for a transformer too).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <map>

#include "corpus.h"
#include "memledger/exec/executor.h"
#include "memledger/onnx/import.h"

namespace memledger {
namespace {

TEST(FastTransformers, LayerNormsAndGelusRunOnTheFastSet) {
  const char* env = std::getenv("MEMLEDGER_SWEEP_DIR");
  if (!env || !*env) GTEST_SKIP() << "MEMLEDGER_SWEEP_DIR is not set (the sweep export, scripts/corpus/sweep.py)";
  for (const char* name : {"vit_b_16", "swin_t"}) {
    SCOPED_TRACE(name);
    const std::filesystem::path model = std::filesystem::path(env) / (std::string(name) + ".onnx");
    if (!std::filesystem::exists(model)) ML_SKIP_OR_FAIL("no " + model.filename().string() + " in " + env);
    const Graph graph = import_onnx_file(model.string());
    const Executor fast(graph, {.kernels = KernelSet::kFast, .threads = 1});
    std::map<std::string, int> gelus;
    for (NodeId id : graph.order()) {
      const Node& n = graph.node(id);
      const std::string kernel = fast.fast_kernel_of(id);
      if (kernel.find("gelu (erf)") != std::string::npos) ++gelus[n.op];
      if (n.op == "Erf") {
        EXPECT_NE(kernel.find("erf GELU"), std::string::npos) << n.name << ": " << kernel;
      }
      if (n.op == "Pow") {
        EXPECT_FALSE(kernel.empty()) << n.name;
      }
    }
    EXPECT_GT(gelus["Mul"], 0) << fast.summary();
    // swin_t's shifted windows come with their masks' index arithmetic (ConstantOfShape,
    // ScatterND, Where, ... on the reference kernels: 319 of its 1,352 nodes); vit_b_16 has none.
    // Its attention's batched products of two activations run fast on either ISA (oneDNN's
    // matmul on AVX-512, the fast set's own loop below it: fast/batched_product.h).
    if (std::string(name) == "vit_b_16") {
      const int nodes = static_cast<int>(graph.order().size());
      EXPECT_LE(50 * (nodes - fast.fast_node_count()), nodes) << fast.summary();
    }
  }
}

}  // namespace
}  // namespace memledger
