// The fast rearrangements: Concat (memcpy of blocks; an 8-bit input that requantizes through
// its table), Transpose and Slice (oneDNN reorders
// from strided views), and the reshape-like copies whose output is the input's bytes.
#include <algorithm>
#include <array>
#include <cstring>
#include <optional>

#include "exec/fast/kernel_common.h"
#include "exec/integer_elementwise.h"

namespace memledger::exec::fast {
namespace {

// Concat of row-major buffers: for every index of the axes before `axis`, each input's
// block (its extent on `axis` × the inner extent) in turn, by memcpy. (oneDNN's concat on
// plain formats copied element by element: 3.9 ms of squeezenet's 12.)
// An 8-bit input whose parameters differ from the output's is copied through its 256-byte
// requantization table (exec/integer_elementwise.h), as the reference kernel copies it.
class ConcatNode : public PreparedNode {
 public:
  using Table = std::array<uint8_t, 256>;
  ConcatNode(int64_t outer, std::vector<int64_t> block_bytes, std::vector<std::optional<Table>> tables)
      : outer_(outer), block_bytes_(std::move(block_bytes)), tables_(std::move(tables)) {}
  int64_t workspace_bytes() const override { return 0; }
  void run(KernelContext& ctx) override {
    std::byte* out = ctx.out(0).data;
    for (int64_t o = 0; o < outer_; ++o)
      for (size_t i = 0; i < block_bytes_.size(); ++i) {
        const auto n = static_cast<size_t>(block_bytes_[i]);
        const std::byte* in = ctx.in(i).data + static_cast<size_t>(o) * n;
        if (tables_[i]) {
          const Table& t = *tables_[i];
          for (size_t e = 0; e < n; ++e) out[e] = static_cast<std::byte>(t[static_cast<uint8_t>(in[e])]);
        } else {
          std::memcpy(out, in, n);
        }
        out += n;
      }
  }
  std::string describe() const override { return "concat (memcpy)"; }

 private:
  int64_t outer_;
  std::vector<int64_t> block_bytes_;
  std::vector<std::optional<Table>> tables_;  // by input: set where it requantizes
};

// Reshape, Flatten, Squeeze, Unsqueeze, Identity, Dropout (inference): the output's bytes
// are the input's; nothing to do when the planner gave the output the input's buffer.
class CopyNode : public PreparedNode {
 public:
  explicit CopyNode(int64_t bytes) : bytes_(bytes) {}
  int64_t workspace_bytes() const override { return 0; }
  void run(KernelContext& ctx) override {
    const std::byte* from = ctx.in(0).data;
    std::byte* to = ctx.out(0).data;
    if (from != to && bytes_ > 0) std::memmove(to, from, static_cast<size_t>(bytes_));
  }
  std::string describe() const override { return "copy"; }
  bool keeps_in_place_promise() const override { return true; }

 private:
  int64_t bytes_;
};

}  // namespace

std::unique_ptr<PreparedNode> prepare_concat(const Graph& g, const Node& n, const PrepareOptions& options) {
  const Value& yv = out_value(g, n);
  const int64_t rank = static_cast<int64_t>(yv.shape.size());
  if (rank == 0) not_fast("scalar");
  const size_t axis = static_cast<size_t>(node_axis(n, 0, rank));
  int64_t outer = 1, inner = 1;
  for (size_t a = 0; a < yv.shape.size(); ++a) {
    if (a < axis) outer *= yv.shape[a];
    if (a > axis) inner *= yv.shape[a];
  }
  std::vector<int64_t> blocks;
  int64_t total = 0;
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Value& v = in_value(g, n, i);
    if (v.dtype != yv.dtype || v.shape.size() != yv.shape.size()) not_fast("inputs differ from the output");
    blocks.push_back(v.shape[axis] * inner * host_element_bytes(v.dtype));
    total += v.shape[axis];
  }
  if (total != yv.shape[axis]) not_fast("extents do not add up");
  if (channels_last(options, n.outputs[0])) {  // on channels: each pixel's channels in turn
    if (axis != 1 || rank != 4) not_fast("channels-last concat off the channel axis");
    outer = yv.shape[0] * yv.shape[2] * yv.shape[3];
    for (size_t i = 0; i < n.inputs.size(); ++i) blocks[i] = in_value(g, n, i).shape[1] * host_element_bytes(yv.dtype);
  }
  std::vector<std::optional<ConcatNode::Table>> tables(n.inputs.size());
  for (size_t i = 0; i < n.inputs.size(); ++i) {
    const Value& v = in_value(g, n, i);
    if (v.quant && yv.quant && !(*v.quant == *yv.quant))
      tables[i] = requantize_bytes(g.requantization, *v.quant, v.dtype, *yv.quant, yv.dtype);
  }
  return std::make_unique<ConcatNode>(outer, std::move(blocks), std::move(tables));
}

void prepare_transpose(DnnlNode& node, const Graph& g, const Node& n) {
  const Value& xv = in_value(g, n, 0);
  const Value& yv = out_value(g, n);
  const dt type = dnnl_type(xv.dtype);
  if (type == dt::undef) not_fast("dtype " + std::string(dtype_name(xv.dtype)));
  const size_t rank = xv.shape.size();
  if (rank == 0) not_fast("scalar");
  std::vector<int64_t> perm = n.ints_attr("perm");
  if (perm.empty())
    for (size_t i = 0; i < rank; ++i) perm.push_back(static_cast<int64_t>(rank - 1 - i));
  if (perm.size() != rank) not_fast("perm");
  const std::vector<int64_t> in_strides = dense_strides(xv.shape);
  memory::dims view_strides;
  for (int64_t p : perm) view_strides.push_back(in_strides.at(static_cast<size_t>(p)));
  const memory src = node.input(0, memory::desc(to_dims(yv.shape), type, view_strides));
  node.reorder_step(src, node.output(0, plain_desc(to_dims(yv.shape), type)));
}

// Slice with constant bounds and positive steps: a reorder from a strided view of the
// input (offset and strides fixed at preparation) into the plain output.
void prepare_slice(DnnlNode& node, const Graph& g, const Node& n) {
  const Value& xv = in_value(g, n, 0);
  const Value& yv = out_value(g, n);
  const dt type = dnnl_type(xv.dtype);
  if (type == dt::undef) not_fast("dtype " + std::string(dtype_name(xv.dtype)));
  const int64_t rank = static_cast<int64_t>(xv.shape.size());
  if (rank == 0) not_fast("scalar");
  std::vector<int64_t> starts, ends, axes, steps;
  if (n.inputs.size() > 1) {
    starts = constant_ints(g, n, 1);
    ends = constant_ints(g, n, 2);
    axes = constant_ints(g, n, 3);
    steps = constant_ints(g, n, 4);
  } else {
    starts = n.ints_attr("starts");
    ends = n.ints_attr("ends");
    axes = n.ints_attr("axes");
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    not_fast("starts, ends, axes and steps differ in length");
  const std::vector<int64_t> in_strides = dense_strides(xv.shape);
  memory::dims strides(in_strides.begin(), in_strides.end());
  int64_t offset = 0;
  for (size_t i = 0; i < starts.size(); ++i) {
    if (axes[i] < -rank || axes[i] >= rank) not_fast("axis");
    const size_t a = static_cast<size_t>(axes[i] < 0 ? axes[i] + rank : axes[i]);
    if (steps[i] < 1) not_fast("a step below 1");
    const int64_t dim = xv.shape[a];
    const int64_t start = std::clamp<int64_t>(starts[i] < 0 ? starts[i] + dim : starts[i], 0, dim);
    offset += start * in_strides[a];
    strides[a] = in_strides[a] * steps[i];
  }
  memory::desc view(to_dims(yv.shape), type, strides);
  view.data.offset0 = offset;
  const memory src = node.input(0, view);
  node.reorder_step(src, node.output(0, plain_desc(to_dims(yv.shape), type)));
}

std::unique_ptr<PreparedNode> prepare_copy(const Graph& g, const Node& n) {
  const Value& in = in_value(g, n, 0);
  const Value& out = out_value(g, n);
  for (size_t i = 1; i < n.outputs.size(); ++i)
    if (n.outputs[i].valid()) not_fast("a second output");
  if (in.dtype != out.dtype || element_count(in.shape, in.name) != element_count(out.shape, out.name))
    not_fast("input and output differ in size");
  return std::make_unique<CopyNode>(element_count(in.shape, in.name) * host_element_bytes(in.dtype));
}

}  // namespace memledger::exec::fast
