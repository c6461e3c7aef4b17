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
           "[{]\"conv\", \"Conv\", -1, -1, -1, -1, -1, 0, 3, 1, 10[}]")
memledger_cli_test(plan.emit_c_refuses_input ARGS plan ${FIT_DATA}/conv_bn_relu.onnx --emit-c ${FIT_DATA}/conv_bn_relu.onnx
  EXIT_CODE 2 OUTPUT "--emit-c .*conv_bn_relu.onnx: refusing to overwrite the input file")

# `memledger fit`: torchvision's mobilenet_v2 (224², the corpus) fits the built-in mcu profile
# (256 KiB, int8, NHWC, 4-byte alignment, constants and input outside the arena) by patching;
# `run --arena --fit` runs exactly that plan bit-identically. Exit 3 with what is live at the
# best peak when nothing fits; exit 2 for a profile without capacity, capacity 0, a grid that
# cannot apply.
set(FIT_MOBILENET ${MEMLEDGER_TEST_CORPUS}/mobilenet_v2.onnx)
memledger_cli_test(fit.mobilenet_v2_mcu NEEDS ${FIT_MOBILENET}
  ARGS fit ${FIT_MOBILENET} --device mcu --json ${FIT_DIR}/mobilenet_v2.json --html ${FIT_DIR}/mobilenet_v2.html
       --emit-c ${FIT_DIR}/mobilenet_v2.h
  OUTPUT "layer by layer +2[.]30 MiB" "in-place rules +1[.]34 MiB" "patches +2[0-9][0-9][.][0-9]+ KiB .* kept, fits"
         "fits: arena 2[0-9][0-9][.][0-9]+ KiB \\([0-9]+ B\\) within 256[.]00 KiB \\(262144 B\\) after patches")
set_tests_properties(cli.fit.mobilenet_v2_mcu PROPERTIES FIXTURES_REQUIRED fit_dir FIXTURES_SETUP fit_mobilenet)
memledger_check_file(fit.mobilenet_v2_header ${FIT_DIR}/mobilenet_v2.h FIXTURES fit_mobilenet NEEDS ${FIT_MOBILENET}
  CONTAINS "#define ML_PATCH_ROWS [2-8]\n" "#define ML_PATCH_STEPS_CONTIGUOUS 1\n" "#define ML_CAPACITY_BYTES 262144 "
           "[{]\"input\", -1, 150528, ML_INPUT, ")
memledger_check_file(fit.mobilenet_v2_json ${FIT_DIR}/mobilenet_v2.json FIXTURES fit_mobilenet NEEDS ${FIT_MOBILENET}
  CONTAINS "\"fit\": [{]" "\"fits\": true" "\"step\": \"patches\"" "\"patch_of_step\": ." "\"arena_bytes\": 2[0-9]+,")
memledger_check_file(fit.mobilenet_v2_html ${FIT_DIR}/mobilenet_v2.html FIXTURES fit_mobilenet NEEDS ${FIT_MOBILENET}
  CONTAINS "<svg[^>]*id=\"arena\"" "id=\"peak-label\"")
memledger_cli_test(run.arena_fit_mobilenet_v2 NEEDS ${FIT_MOBILENET}
  ARGS run ${FIT_MOBILENET} --arena --fit --device mcu --kernels reference
  OUTPUT "fit plan on 'mcu': fits: arena" "in-place decisions: the same as the fit's plan" "guard violations: 0"
         "untouched workspaces: 0" "outputs: bit-identical to the ordinary run \\(1 of 1\\)")
# The fast kernels plan the fit's patched graph with their own contracts (oneDNN workspaces;
# a depthwise Conv reading its input directly keeps no in-place promise) and run it
# bit-identically to their ordinary run of the model.
memledger_cli_test(run.arena_fit_fast_kernels_mobilenet_v2 NEEDS ${FIT_MOBILENET}
  ARGS run ${FIT_MOBILENET} --arena --fit --device mcu --kernels fast
  OUTPUT "fit plan on 'mcu': fits: arena" "in-place decisions: [0-9]+ differ from the fit's plan under the fast kernels' contracts"
         "fast kernels, " "fast kernels' contracts: [1-9][0-9]* B of declared workspace" "guard violations: 0"
         "the fit's graph against the model, fast kernels: output 'logits' "
         "untouched workspaces: 0" "outputs: bit-identical to the ordinary run of the fit's graph \\(1 of 1\\)")

memledger_cli_test(fit.small_model_fits_at_once ARGS fit ${FIT_DATA}/conv_bn_relu.onnx --device teaching
  OUTPUT "layer by layer .* kept, fits" "fits: arena 4[.]27 KiB \\(4368 B\\) within 32[.]00 KiB" NOT_OUTPUT "patches")
memledger_cli_test(fit.does_not_fit ARGS fit ${FIT_DATA}/conv_bn_relu.onnx --device teaching --capacity 2048
  --json ${FIT_DIR}/not_fit.json
  EXIT_CODE 3 OUTPUT "patches" "DOES NOT FIT: the best reached" "Live at the peak of the best plan" "at step [0-9]+ \\(")
set_tests_properties(cli.fit.does_not_fit PROPERTIES FIXTURES_REQUIRED fit_dir FIXTURES_SETUP fit_not_fit)
memledger_check_file(fit.does_not_fit_still_writes ${FIT_DIR}/not_fit.json FIXTURES fit_not_fit
  CONTAINS "\"fits\": false")
memledger_cli_test(fit.host_has_no_capacity ARGS fit ${FIT_DATA}/conv_bn_relu.onnx --device host
  EXIT_CODE 2 OUTPUT "device 'host' .* has no capacity \\(capacity_bytes = 0\\)")
memledger_cli_test(fit.capacity_zero ARGS fit ${FIT_DATA}/conv_bn_relu.onnx --device teaching --capacity 0
  EXIT_CODE 2 OUTPUT "has no capacity")
memledger_cli_test(fit.needs_device ARGS fit ${FIT_DATA}/conv_bn_relu.onnx EXIT_CODE 2 OUTPUT "--device is required")
memledger_cli_test(fit.patch_does_not_parse ARGS fit ${FIT_DATA}/conv_bn_relu.onnx --device teaching --patch 4x4
  EXIT_CODE 2 OUTPUT "--patch '4x4': expected ROWSxCOLS@VALUE")
memledger_cli_test(fit.patch_no_such_value ARGS fit ${FIT_DATA}/conv_bn_relu.onnx --device teaching --patch 2x2@nosuch
  EXIT_CODE 2 OUTPUT "--patch '2x2@nosuch': the model has no value 'nosuch'")
memledger_cli_test(fit.patch_grid_cannot_apply NEEDS ${FIT_MOBILENET}
  ARGS fit ${FIT_MOBILENET} --device mcu --patch 5x5@/features/features.1/conv/conv.2/Conv_output_0x
  EXIT_CODE 2 OUTPUT "the model has no value")
memledger_cli_test(fit.patch_grid_too_fine NEEDS ${FIT_MOBILENET}
  ARGS fit ${FIT_MOBILENET} --device mcu --patch 999x999@/features/features.4/conv/conv.2/Conv_output_0
  EXIT_CODE 2 OUTPUT "/features/features.4/conv/conv.2/Conv_output_0")
memledger_cli_test(fit.patch_forced NEEDS ${FIT_MOBILENET}
  ARGS fit ${FIT_MOBILENET} --device mcu --patch 4x4@/features/features.4/conv/conv.2/Conv_output_0
  OUTPUT "patches .* kept" "4x4 patches up to '/features/features.4/conv/conv.2/Conv_output_0' \\(forced\\)")
memledger_cli_test(run.fit_needs_arena ARGS run ${FIT_DATA}/conv_bn_relu.onnx --fit
  EXIT_CODE 2 OUTPUT "--fit requires --arena")
memledger_cli_test(run.fit_host_has_no_capacity ARGS run ${FIT_DATA}/conv_bn_relu.onnx --arena --fit
  EXIT_CODE 2 OUTPUT "has no capacity")

# Patches of patches: at 170 KiB one grid does not reach (its lowest is ~191 KiB); 2x1 patches
# of the stage up to block 7 with 3x4 patches up to block 4 inside each do (147 KiB, +19.6%
# MACs), forced here (the search that finds them is tests/fit/fit_test.cpp's), and the plan
# runs bit-identically inside its arena.
set(FIT_NESTED --device mcu --capacity 174080 --patch 2x1@/features/features.7/conv/conv.2/Conv_output_0
    --inner-patch 3x4@/features/features.4/conv/conv.2/Conv_output_0)
memledger_cli_test(fit.nested_forced NEEDS ${FIT_MOBILENET} ARGS fit ${FIT_MOBILENET} ${FIT_NESTED}
  --json ${FIT_DIR}/nested.json
  OUTPUT "patches of patches +147[.]00 KiB .* kept, fits" "in each 3x4 patches up to '/features/features.4/conv/conv.2/Conv_output_0' \\(forced\\)"
         "fits: arena 147[.]00 KiB \\(150528 B\\) within 170[.]00 KiB")
set_tests_properties(cli.fit.nested_forced PROPERTIES FIXTURES_REQUIRED fit_dir FIXTURES_SETUP fit_nested)
memledger_check_file(fit.nested_json ${FIT_DIR}/nested.json FIXTURES fit_nested NEEDS ${FIT_MOBILENET}
  CONTAINS "\"step\": \"patches of patches\"" "\"inner\": [{]" "\"split\": \"/features/features.4/conv/conv.2/Conv_output_0\"")
memledger_cli_test(run.arena_fit_nested NEEDS ${FIT_MOBILENET} ARGS run ${FIT_MOBILENET} --arena --fit ${FIT_NESTED}
  OUTPUT "fit plan on 'mcu': fits: arena 147[.]00 KiB" "guard violations: 0" "untouched workspaces: 0"
         "outputs: bit-identical to the ordinary run of the fit's graph \\(1 of 1\\)")
memledger_cli_test(fit.inner_patch_needs_patch ARGS fit ${FIT_DATA}/conv_bn_relu.onnx --device teaching --inner-patch 2x2@r
  EXIT_CODE 2 OUTPUT "--inner-patch requires --patch")
