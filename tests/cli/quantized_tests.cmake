# Quantized models (issue 35): inspect shows each value's quantization and the graph's
# requantization rule; plan counts the int8 bytes of the folded model (--keep-qdq: as
# written); bad quantization parameters get exit code 2 naming the node and the field, and
# no report is written.
set(_q ${PROJECT_SOURCE_DIR}/tests/data/onnx)

memledger_cli_test(quantized.inspect ARGS inspect ${_q}/qdq_block.onnx
  OUTPUT "requantization: float-scale \\(onnxruntime\\)" "nodes \\(11\\)" "Conv +conv1 +q1, w7, b11 +q16"
         "q16 +activation +int8 s=0.04 zp=-5 +\\[1,8,4,4\\]" "w7 +int8 per-axis\\[0\\] 8 scales +\\[8,3,3,3\\]"
         "b11 +int32 per-axis\\[0\\] 8 scales"
  NOT_OUTPUT "f[0-9]+ +activation +float32 +\\[1,8")
memledger_cli_test(quantized.inspect_json ARGS inspect ${_q}/qlinear_ops.onnx --format json
  OUTPUT "\"requantization\": \"float-scale \\(onnxruntime\\)\"" "\"zero_points\": \\[[^]]*120" "\"axis\": 0")
memledger_cli_test(quantized.inspect_integer_ops ARGS inspect ${_q}/integer_ops.onnx
  OUTPUT "Conv +convint +x, w +c" "x +input +uint8 s=1 zp=100" "c +activation +int32 +\\[1,2,2,2\\]")
memledger_cli_test(quantized.inspect_keep_qdq ARGS inspect ${_q}/qdq_block.onnx --keep-qdq
  OUTPUT "nodes \\(35\\)" NOT_OUTPUT "requantization")
# Folded: int8 values under the integer kernels' contracts (3200 B under the float kernels'
# contracts, whose Conv declared a float32 workspace).
memledger_cli_test(quantized.plan ARGS plan ${_q}/qdq_block.onnx --brief OUTPUT "peak-live 2.06 KiB \\(2112 B\\)")
memledger_cli_test(quantized.plan_keep_qdq ARGS plan ${_q}/qdq_block.onnx --brief --keep-qdq
  OUTPUT "peak-live 8.00 KiB \\(8192 B\\)")

foreach(case
    "scale_negative|node DequantizeLinear 'w_dq': value 'w7': scale 'ws8' \\(input 1\\) \\[1\\] is -0.5: a scale must be finite and greater than 0"
    "scale_nan|node QuantizeLinear 'q1_quant': value 'q1': scale 's2' \\(input 1\\) \\[0\\] is nan"
    "scale_inf|node DequantizeLinear 'w_dq': value 'w7': scale 'ws8' \\(input 1\\) \\[1\\] is inf"
    "axis_length|node DequantizeLinear 'w_dq': value 'w7': scale 'ws8' \\(input 1\\) holds 3 scales but axis 0 has extent 4"
    "zero_point|node DequantizeLinear 'bias_dq': value 'b10': zero point 'bz12' \\(input 2\\) \\[2\\] is 7: an int32 value's zero point must be 0"
    "bias_overflow|node Conv 'conv': bias 'b10', output channel 1: the worst-case accumulation .* overflows int32")
  string(REPLACE "|" ";" parts "${case}")
  list(GET parts 0 name)
  list(GET parts 1 message)
  memledger_cli_test(quantized.bad_${name}
    ARGS plan ${_q}/bad_quant_${name}.onnx --json ${CMAKE_CURRENT_BINARY_DIR}/quantized_bad_${name}.json EXIT_CODE 2
    OUTPUT "memledger: error: [^\n]*bad_quant_${name}.onnx: ${message}" NOT_OUTPUT "peak-live")
  memledger_check_file(quantized.bad_${name}_no_report ${CMAKE_CURRENT_BINARY_DIR}/quantized_bad_${name}.json ABSENT)
  set_tests_properties(cli.quantized.bad_${name}_no_report PROPERTIES DEPENDS cli.quantized.bad_${name})
endforeach()
unset(_q)
