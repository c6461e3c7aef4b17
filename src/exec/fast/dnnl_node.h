// A prepared node made of oneDNN primitives: memory objects bound to the node's inputs,
// outputs or regions of its workspace, and the primitives to execute in order with
// argument lists built at preparation. A run only points the memory objects at this run's
// buffers and executes: no primitive, memory descriptor or argument list is made then.
#pragma once

#include <dnnl.hpp>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "exec/fast/prepared_node.h"

namespace memledger::exec::fast {

const dnnl::engine& cpu_engine();

// The attributes every primitive is made with: user-managed scratchpad (it is workspace).
dnnl::primitive_attr user_scratchpad_attr();

// Plain row-major descriptor of `dims` (a scalar is one element).
dnnl::memory::desc plain_desc(const dnnl::memory::dims& dims, dnnl::memory::data_type type);
dnnl::memory::dims to_dims(const Shape& shape);

// The oneDNN type of `dtype`, or undef when oneDNN has none (int64, double, ...).
dnnl::memory::data_type dnnl_type(DType dtype);

class DnnlNode : public PreparedNode {
 public:
  // Memory objects over input i, output i, or a fresh workspace region of desc's size.
  dnnl::memory input(int index, const dnnl::memory::desc& desc);
  dnnl::memory output(int index, const dnnl::memory::desc& desc);
  dnnl::memory workspace(const dnnl::memory::desc& desc);
  // A memory object over the same input or output as `m` (made by input() or output()),
  // described by `desc` instead: another view of the same bytes.
  dnnl::memory alias(const dnnl::memory& m, const dnnl::memory::desc& desc);
  // The scratchpad of a primitive descriptor: a workspace region, or none when it is 0.
  dnnl::memory scratchpad(const dnnl::primitive_desc_base& pd);
  // `from` in `want`'s format: `from` itself when they agree, else a workspace region
  // filled by a reorder step (added now, so it runs before later steps).
  dnnl::memory reordered(const dnnl::memory& from, const dnnl::memory::desc& want);
  // The constant weights of input `index` (`from`, bound to it) in `want`'s format: `from`
  // itself when they agree; with prepacking, a buffer the node holds, reordered now (not
  // when only the contract is wanted), after which a mapped constant's pages go back to
  // the kernel (Tensor::release_pages: the run reads the reordered copy only); else a
  // workspace region reordered on every run.
  dnnl::memory constant_reordered(const dnnl::memory& from, const Tensor& constant, const dnnl::memory::desc& want,
                                  const PrepareOptions& options);
  // Writes `from` (a workspace region in the primitive's format) into `to` at the end.
  void reorder_step(const dnnl::memory& from, const dnnl::memory& to);

  void add_step(const dnnl::primitive& primitive, std::vector<std::pair<int, dnnl::memory>> args,
                const std::string& impl);
  // A step of the fast set's own code, run in order with the primitives: it may read the
  // buffers of `ctx` and the data handles of this node's memory objects (bound by then).
  void add_loop(std::function<void(KernelContext&)> loop, const std::string& impl);
  // After the primitives: output 0 = SiLU of input `input`, or of output 0 itself (in place)
  // where `input` is -1, over `elements` floats (fast/silu.h).
  void set_silu(int input, int64_t elements);

  int64_t workspace_bytes() const override { return workspace_bytes_; }
  void run(KernelContext& ctx) override;
  std::string describe() const override;
  int64_t prepacked_bytes() const override { return prepacked_bytes_; }
  bool keeps_in_place_promise() const override { return in_place_; }
  void set_keeps_in_place_promise() { in_place_ = true; }
  int in_place_input() const override { return in_place_input_; }
  void set_in_place_input(int input) { in_place_input_ = input; }
  bool fused() const override { return fused_; }
  void set_fused() { fused_ = true; }

 private:
  enum class Source { kInput, kOutput, kWorkspace };
  struct Binding {
    dnnl::memory memory;
    Source source;
    int index;       // input or output index
    int64_t offset;  // into the workspace
  };
  struct Step {
    dnnl::primitive primitive;
    std::vector<dnnl::memory> keep;  // owns the memory objects the C arguments name
    std::vector<dnnl_exec_arg_t> args;
    std::function<void(KernelContext&)> loop;  // set for add_loop's steps (no primitive)
  };
  dnnl::memory bind(Source source, int index, const dnnl::memory::desc& desc);

  std::vector<Binding> bindings_;
  std::vector<Step> steps_;
  std::vector<std::string> impls_;
  int64_t workspace_bytes_ = 0;
  std::vector<std::unique_ptr<std::byte[]>> prepacked_;
  int64_t prepacked_bytes_ = 0;
  bool in_place_ = false;
  int in_place_input_ = -1;
  bool fused_ = false;
  int silu_input_ = -1;
  int64_t silu_elements_ = 0;
};

}  // namespace memledger::exec::fast
