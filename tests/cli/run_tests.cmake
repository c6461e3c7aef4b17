# `memledger run`: inputs from files or seeds, outputs written safely, --compare, and the
# bad inputs that must end with exit code 2 (or 4 for a failed comparison).
set(exec_data ${PROJECT_SOURCE_DIR}/tests/data/exec)
set(onnx_data ${PROJECT_SOURCE_DIR}/tests/data/onnx)
memledger_cli_test(run_seeded ARGS run ${onnx_data}/affine_distinct.onnx --seed 3
  OUTPUT "inputs: seeded random \\(seed 3\\)" "output 'y': float32 \\[1,12,20,28\\]: min")
memledger_cli_test(run_npy_input ARGS run ${exec_data}/add_one.onnx --input x=${exec_data}/y.npy
  --output-dir ${CMAKE_CURRENT_BINARY_DIR}/run_out --output-format pb
  OUTPUT "output 'y': float32 \\[2,3\\]" "wrote .*run_out/y.pb")
memledger_cli_test(run_pb_input ARGS run ${exec_data}/add_one.onnx --input x=${exec_data}/x.pb
  --output-dir ${CMAKE_CURRENT_BINARY_DIR}/run_out_npy OUTPUT "wrote .*run_out_npy/y.npy")
memledger_cli_test(run_compare_same ARGS run ${exec_data}/add_one.onnx --compare ${exec_data}/add_one.onnx
  OUTPUT "output 'y': max\\|diff\\| 0 at [0-9]+, max rel 0, .* 0 beyond tolerance \\(ok\\)")
memledger_cli_test(run_compare_differs ARGS run ${exec_data}/add_one.onnx --compare ${exec_data}/add_two.onnx
  --output-dir ${CMAKE_CURRENT_BINARY_DIR}/run_out_never
  EXIT_CODE 4 OUTPUT "max\\|diff\\| 1 at" "EXCEEDS TOLERANCE" "nothing written" NOT_OUTPUT "wrote")
memledger_cli_test(run_compare_loose ARGS run ${exec_data}/add_one.onnx --compare ${exec_data}/add_two.onnx
  --tolerance 10 OUTPUT "max\\|diff\\| 1 at" NOT_OUTPUT "EXCEEDS")
memledger_cli_test(run_refuses_overwriting_input ARGS run ${exec_data}/add_one.onnx --input x=${exec_data}/y.npy
  --output-dir ${exec_data} EXIT_CODE 2 OUTPUT "refusing to overwrite the input file .*y.npy" NOT_OUTPUT "wrote")
memledger_cli_test(run_unknown_input ARGS run ${exec_data}/add_one.onnx --input z=${exec_data}/y.npy
  EXIT_CODE 2 OUTPUT "--input: input 'x' \\(float32 \\[2,3\\]\\) has no file")
memledger_cli_test(run_extra_input ARGS run ${exec_data}/add_one.onnx --input x=${exec_data}/y.npy
  --input z=${exec_data}/y.npy EXIT_CODE 2 OUTPUT "--input: 'z': the model has no input of that name \\(inputs: x\\)")
memledger_cli_test(run_wrong_shape ARGS run ${exec_data}/add_one.onnx --input x=${exec_data}/x_wrong_shape.npy
  EXIT_CODE 2 OUTPUT "input 'x': .*x_wrong_shape.npy holds float32 \\[3,2\\], the model expects float32 \\[2,3\\]")
memledger_cli_test(run_wrong_dtype ARGS run ${exec_data}/add_one.onnx --input x=${exec_data}/x_int64.npy
  EXIT_CODE 2 OUTPUT "input 'x': .*x_int64.npy holds int64 \\[2,3\\]")
memledger_cli_test(run_missing_file ARGS run ${exec_data}/add_one.onnx --input x=${exec_data}/missing.npy
  EXIT_CODE 2 OUTPUT "missing.npy: no such file")
memledger_cli_test(run_bad_extension ARGS run ${exec_data}/add_one.onnx --input x=${exec_data}/add_two.onnx
  EXIT_CODE 2 OUTPUT "unknown tensor file type")
memledger_cli_test(run_unsupported_op ARGS run ${onnx_data}/custom_op.onnx
  EXIT_CODE 2 OUTPUT "node FancyNorm .fancy.: operator com.example.FancyNorm has no kernel")

# run --arena: the model planned for the device and run inside its arena with guards.
memledger_cli_test(run_arena_teaching ARGS run ${onnx_data}/affine_distinct.onnx --arena
  OUTPUT "arena run on 'host'" "arena [0-9]+ B, peak-live [0-9]+ B, arena / peak-live 1.000" "guard violations: 0"
  "untouched workspaces: 0" "outputs: bit-identical to the ordinary run \\(1 of 1\\)")
memledger_cli_test(run_arena_teaching_device ARGS run ${onnx_data}/affine_distinct.onnx --arena --device teaching
  OUTPUT "arena run on 'teaching' \\(float shadow: planned with the model's dtypes, not int8\\)" "guard violations: 0"
  "bit-identical")
memledger_cli_test(run_arena_conv_workspace ARGS run ${onnx_data}/conv_bn_relu.onnx --arena --seed 5
  OUTPUT "guard violations: 0" "untouched workspaces: 0" "bit-identical")
memledger_cli_test(run_arena_device_file ARGS run ${onnx_data}/conv_bn_relu.onnx --arena
  --device ${PROJECT_SOURCE_DIR}/tests/data/device/npu.toml OUTPUT "guard violations: 0" "bit-identical")
memledger_cli_test(run_arena_unknown_device ARGS run ${onnx_data}/affine_distinct.onnx --arena --device nosuch
  EXIT_CODE 2 OUTPUT "nosuch")
memledger_cli_test(run_device_needs_arena ARGS run ${onnx_data}/affine_distinct.onnx --device teaching
  EXIT_CODE 2 OUTPUT "--device requires --arena")

# Kernel sets, threads and timing (issue 15).
# A single run reorders weights into each node's workspace (prepacking would hold a copy of
# every weight); with --repeat they are prepacked once.
memledger_cli_test(run_fast_kernels_default ARGS run ${onnx_data}/conv_bn_relu.onnx
  OUTPUT "kernels: fast kernels \\(oneDNN, 1 thread\\) on 6 of 6 nodes; weights reordered on every run, in the declared workspaces")
memledger_cli_test(run_fast_kernels_prepacked_for_repeat ARGS run ${onnx_data}/conv_bn_relu.onnx --repeat 1
  OUTPUT "kernels: fast kernels \\(oneDNN, 1 thread\\) on 6 of 6 nodes; weights prepacked once: [0-9]+ B held outside the plan")
memledger_cli_test(run_reference_kernels ARGS run ${onnx_data}/conv_bn_relu.onnx --kernels reference
  OUTPUT "kernels: reference kernels on all 6 nodes" NOT_OUTPUT "oneDNN")
memledger_cli_test(run_unknown_kernels ARGS run ${onnx_data}/conv_bn_relu.onnx --kernels blas EXIT_CODE 2
  OUTPUT "--kernels")
memledger_cli_test(run_repeat_prints_median ARGS run ${onnx_data}/conv_bn_relu.onnx --repeat 5 --threads 2
  OUTPUT "latency: 5 runs after a warm-up: median [0-9.]+ ms, min [0-9.]+, max [0-9.]+" "oneDNN, 2 threads")
# --threads 0: every core; the arena planned with those threads' declared workspaces.
memledger_cli_test(run_threads_every_core ARGS run ${onnx_data}/conv_bn_relu.onnx --threads 0 --arena
  OUTPUT "oneDNN, [1-9][0-9]* threads?\\)" "guard violations: 0" "bit-identical")
memledger_cli_test(run_threads_negative_refused ARGS run ${onnx_data}/conv_bn_relu.onnx --threads -1 EXIT_CODE 2
  OUTPUT "--threads")
memledger_cli_test(run_repeat_zero_refused ARGS run ${onnx_data}/conv_bn_relu.onnx --repeat 0 EXIT_CODE 2
  OUTPUT "--repeat")
memledger_cli_test(run_arena_fast_kernels_timed ARGS run ${onnx_data}/conv_bn_relu.onnx --arena --repeat 3
  OUTPUT "fast kernels, [0-9.]+ ms" "guard violations: 0" "untouched workspaces: 0" "bit-identical"
  "arena latency \\(planned offsets, no guards\\): 3 runs after a warm-up: median [0-9.]+ ms")
memledger_cli_test(run_arena_fast_no_prepack ARGS run ${onnx_data}/conv_bn_relu.onnx --arena --no-prepack
  OUTPUT "weights reordered on every run, in the declared workspaces" "guard violations: 0"
  "untouched workspaces: 0" "bit-identical")
memledger_cli_test(run_arena_reference_kernels ARGS run ${onnx_data}/conv_bn_relu.onnx --arena --kernels reference
  OUTPUT "reference kernels, [0-9.]+ ms" "guard violations: 0" "untouched workspaces: 0" "bit-identical")
