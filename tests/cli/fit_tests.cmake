# Making a model fit (issue 13): `plan --emit-c` and `fit --emit-c` write the plan as a C
# header; a C compiler builds a program over it in tests/report/c_header_test.cpp, here the
# command's side: the file is written with the figures the command printed, and refused
# where an output file is refused.
set(FIT_DIR ${CMAKE_CURRENT_BINARY_DIR}/fit_cli)
set(FIT_DATA ${PROJECT_SOURCE_DIR}/tests/data/onnx)
add_test(NAME cli.fit.setup COMMAND ${CMAKE_COMMAND} -E make_directory ${FIT_DIR})
set_tests_properties(cli.fit.setup PROPERTIES FIXTURES_SETUP fit_dir)

memledger_cli_test(plan.emit_c ARGS plan ${FIT_DATA}/conv_bn_relu.onnx --device teaching --brief
  --emit-c ${FIT_DIR}/conv_bn_relu.h OUTPUT "peak-live 4.27 KiB \\(4368 B\\), arena 4.27 KiB \\(4368 B")
set_tests_properties(cli.plan.emit_c PROPERTIES FIXTURES_REQUIRED fit_dir FIXTURES_SETUP plan_emit_c)
memledger_check_file(plan.emit_c_header ${FIT_DIR}/conv_bn_relu.h FIXTURES plan_emit_c
  CONTAINS "#ifndef ML_PLAN_CONV_BN_RELU_H" "#define ML_ARENA_BYTES 4368\n" "#define ML_ARENA_ALIGNMENT 16\n"
           "#define ML_BUFFER_COUNT 16\n" "#define ML_STEP_COUNT 6\n" "[{]\"conv.workspace\", 0, 1728, ML_WORKSPACE, 0, 0, -1[}]"
           "[{]\"conv\", \"Conv\", -1, 0, 3, 1, 10[}]")
memledger_cli_test(plan.emit_c_refuses_input ARGS plan ${FIT_DATA}/conv_bn_relu.onnx --emit-c ${FIT_DATA}/conv_bn_relu.onnx
  EXIT_CODE 2 OUTPUT "refusing to write an output over the input file")
