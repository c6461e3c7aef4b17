// The fast kernel set (oneDNN 2.6): a node's primitives are created once, when an Executor
// is made, never inside a timed run. Every byte a primitive needs beyond its inputs and
// outputs — oneDNN's scratchpad (user-managed) and the buffers of any reorder into the
// blocked formats oneDNN prefers — lies in the node's declared workspace, at offsets fixed
// at preparation, so the kernel contract states exactly what the run touches.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "exec/kernel.h"

namespace memledger::exec::fast {

class PreparedNode {
 public:
  virtual ~PreparedNode() = default;
  // The workspace the run uses: scratchpads and reorder buffers, 64-byte aligned regions.
  virtual int64_t workspace_bytes() const = 0;
  // Runs on the buffers of `ctx` (its workspace exactly workspace_bytes()). Allocates
  // nothing of its own (oneDNN's execute keeps a few bytes of argument bookkeeping).
  virtual void run(KernelContext& ctx) = 0;
  // The oneDNN implementations chosen, for reports ("jit:avx512_core, reorder").
  virtual std::string describe() const = 0;
  // Bytes of constants (weights) reordered once, at preparation, into the primitive's
  // format and held by the node outside any plan (0 unless prepacking).
  virtual int64_t prepacked_bytes() const { return 0; }
  // Whether the op table's in-place promise (an output may take an input's buffer) holds
  // for this kernel: elementwise ones write each element after reading it; a Conv does only
  // where it reads its input through a workspace copy or writes its output through one.
  virtual bool keeps_in_place_promise() const { return false; }
  // Fusion (PrepareOptions::fuse): this node's work is done by its fusion partner
  // (fusion_partner()), which then says fused().
  virtual bool relies_on_fusion() const { return false; }
  virtual bool fused() const { return false; }
  // The input whose bytes the output is, unchanged (it copies only where the buffers
  // differ), or -1: a run may hand the output that input's buffer when nothing reads the
  // input afterwards.
  virtual int forwarded_input() const { return -1; }
  // An input the output may share its buffer with (the kernel reads each element before it
  // writes it: an elementwise oneDNN primitive run in place), or -1: a heap run hands the
  // output that input's buffer when nothing reads the input afterwards, as a planned arena
  // does where the plan put them together (the op table's in-place promise).
  virtual int in_place_input() const { return -1; }
};

// By value index: 1 where the value's bytes are channels-last (NHWC), 0 where row-major.
using ChannelsLast = std::vector<uint8_t>;

struct PrepareOptions {
  int threads = 1;
  // Constant weights in a blocked format are reordered once here and held (prepacked_bytes)
  // instead of being reordered into the workspace on every run.
  bool prepack_weights = true;
  // Only the contract is wanted: the primitives are made, no prepacking reorder runs.
  bool contract_only = false;
  // The activations' byte order (fast/layout.h); null: every value row-major.
  const ChannelsLast* channels_last = nullptr;
  // Fusion where the graph allows it (the plan's values stay as they are):
  // - SiLU as exported, s = Sigmoid(x), y = Mul(x, s) with s read by that Mul only, runs as
  //   one oneDNN swish in the Mul (one pass over x instead of three); the Sigmoid's output
  //   stays in the plan but is never written nor read.
  // - An activation the op table marks conv_post_op (Relu, Clip, Sigmoid) that alone reads a Conv's output, or a SiLU
  // whose x is a Conv's output
  //   read by nothing else, is a post-op of the Conv, which writes the activated values into
  //   its own output; that node then forwards them (forwarded_input()).
  //   Relu and Clip are idempotent (the op table's record says), so one that computes anyway gets the same numbers; a
  //   forwarding node whose Conv did not fuse is prepared again without fusion.
  bool fuse = true;
};

// The node whose fused() `node` relies on when it relies_on_fusion(), or null.
const Node* fusion_partner(const Graph& graph, const Node& node);
// The node whose output a Conv's post-op computes (a Relu, Clip, Sigmoid or SiLU's Mul), or
// null. A SiLU or Sigmoid is not idempotent: a fused Conv needs that node to forward
// (forwarded_input()).
const Node* post_op_node(const Graph& graph, const Node& conv);

// Whether the fast set has a kernel for the operator at all: its op table record (at the
// graph's opset) names a FastKernel family.
bool has_fast_kernel(const Graph& graph, const Node& node);
// Whether the fast set runs an integer node (ir/integer_node.h) at all: its op table record
// says the fast set has its integer form (IntegerRule::fast). Its float kernels never see
// quantized bytes.
bool has_fast_integer_form(const Graph& graph, const Node& node);

// The fast kernel of `node` prepared for options.threads threads, or null with `why` saying why
// the fast set does not run this node (then the reference kernel does).
std::unique_ptr<PreparedNode> prepare(const Graph& graph, const Node& node, const PrepareOptions& options,
                                      std::string& why);

// How the fast kernel of `node` treats the byte order of its values (fast/layout.h): groups
// of values that must share one order, and values it takes or makes row-major only.
struct LayoutRule {
  std::vector<std::vector<ValueId>> ties;
  std::vector<ValueId> row_major;
};
LayoutRule layout_rule(const Graph& graph, const Node& node);
// A value whose spatial extent is 1 (or that is not a 4-d float or 8-bit tensor) has one byte order.
bool layout_neutral(const Value& v);

// How deep this thread is inside a oneDNN call of a run (execute, set_data_handle) right now (0 outside): a test that
// counts heap allocations tells oneDNN's own argument bookkeeping from memledger's.
int onednn_call_depth();

// Sets the threads oneDNN's kernels use on this thread (OpenMP), at least 1.
void set_threads(int threads);

}  // namespace memledger::exec::fast
