# `memledger inspect` on the tiny models of tests/data/onnx, and exit code 2 with a message
# naming the file and the node or value for each kind of bad input.
set(ONNX_DATA ${PROJECT_SOURCE_DIR}/tests/data/onnx)

memledger_cli_test(inspect_small_cnn ARGS inspect ${ONNX_DATA}/conv_bn_relu.onnx
  OUTPUT "model: .*conv_bn_relu.onnx \\(graph 'main', opset 13\\)" "device: host"
         "nodes \\(6\\)" "Conv +conv +x, w, b +c"
         "x +input +float32 +\\[1,3,8,8\\] +NCHW +NCHW +tensor +64 B +768 B +768 B"
         "gamma +float32 +\\[4\\] +C +16 B +64 B +BatchNormalization 'bn': operand"
         "lint \\(0\\)" "unknown operators \\(0\\)")
memledger_cli_test(inspect_teaching_device ARGS inspect ${ONNX_DATA}/affine_distinct.onnx --device teaching
  OUTPUT "device: teaching" "c +activation +float32 +\\[1,12,20,28\\] +NCHW +NHWC +pixel +16 B +6.56 KiB +8.75 KiB"
         "scale +float32 +\\[1,12,1,1\\] +NCHW .*Mul 'scale_mul': repeated along H,W of \\[1,12,20,28\\]")
memledger_cli_test(inspect_lint_c_eq_w ARGS inspect ${ONNX_DATA}/affine_c_eq_w.onnx
  OUTPUT "lint \\(2\\)"
         "warning \\[ambiguous-broadcast-axis\\] node Mul 'scale_mul': parameter 'scale' \\[20\\] broadcasts against 'c' \\[1,20,16,20\\] NCHW along its last axis, axis 3 \\(W\\)"
         "reshape it to \\[1,20,1,1\\] for the channel axis"
         "scale +float32 +\\[20\\] +W .*repeated along C,H of \\[1,20,16,20\\]")
memledger_cli_test(inspect_lint_quiet ARGS inspect ${ONNX_DATA}/affine_c_eq_w_stated.onnx OUTPUT "lint \\(0\\)"
  NOT_OUTPUT "warning")
memledger_cli_test(inspect_unknown_operator ARGS inspect ${ONNX_DATA}/custom_op.onnx
  OUTPUT "unknown operators \\(1\\)" "com.example.FancyNorm \\(node FancyNorm 'fancy'\\)")
memledger_cli_test(inspect_json ARGS inspect ${ONNX_DATA}/affine_c_eq_w.onnx --format json
  OUTPUT "\"schema_version\": 1" "\"logical_bytes\": 25600" "\"code\": \"ambiguous-broadcast-axis\""
         "\"repeated_axes\": \\[[^]]*\"C\"")
memledger_cli_test(inspect_input_shape ARGS inspect ${ONNX_DATA}/bad_dynamic_dims.onnx --input-shape x=2x3x4x4
  OUTPUT "x +input +float32 +\\[2,3,4,4\\]")
memledger_cli_test(inspect_input_layout_nhwc ARGS inspect ${ONNX_DATA}/nhwc_input.onnx --input-layout NHWC
  OUTPUT "x +input +float32 +\\[1,5,6,3\\] +NHWC")

# Bad input: exit code 2, the file and the place named, no table printed.
foreach(case
    "truncated|not an ONNX model: the protobuf does not parse"
    "garbled|not an ONNX model"
    "missing_initializer|node Conv 'conv': input 'w_missing' is not defined"
    "cycle|node Add 'add_a': input 'b' comes from node Relu 'relu_b', which depends on this node's output \\(a cycle\\)"
    "dangling_output|graph output 'nowhere' is not defined"
    "dynamic_dims|graph input 'x': axis 0 has no static extent \\('N'\\). give it an input shape \\(x="
    "overflow_shape|graph input: value 'x' of shape \\[1099511627776,1099511627776,16\\].*overflows"
    "opset6|opset 6 is not supported \\(memledger reads opsets 7 to 17\\)"
    "opset18|opset 18 is not supported"
    "initializer_size|initializer 'w': shape \\[1000,1000\\] of float32 needs 4000000 bytes but raw_data holds 8"
    "if_subgraph|node If 'choose': attribute '[a-z_]+' is a subgraph"
    "external_escape|initializer 'w': external data location '[./a-z]+' leaves the model's folder")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 name)
  list(GET parts 1 message)
  memledger_cli_test(inspect_bad_${name} ARGS inspect ${ONNX_DATA}/bad_${name}.onnx EXIT_CODE 2
    OUTPUT "memledger: error: [^\n]*bad_${name}.onnx: ${message}" NOT_OUTPUT "nodes \\(")
endforeach()
memledger_cli_test(inspect_missing_file ARGS inspect no_such_model.onnx EXIT_CODE 2
  OUTPUT "no_such_model.onnx: no such file")
memledger_cli_test(inspect_bad_input_shape ARGS inspect ${ONNX_DATA}/bad_dynamic_dims.onnx --input-shape x=2xNx4
  EXIT_CODE 2 OUTPUT "--input-shape 'x=2xNx4': expected NAME=1x3x224x224")
# The library names the input shape it refuses; the command line names the flag that gave it.
memledger_cli_test(inspect_input_shape_names_its_flag ARGS inspect ${ONNX_DATA}/bad_dynamic_dims.onnx --input-shape z=1
  EXIT_CODE 2 OUTPUT "memledger: error: --input-shape: [^\n]*bad_dynamic_dims.onnx: input shape for 'z': not a graph input \\(inputs: x\\)")
