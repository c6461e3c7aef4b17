# `memledger optimize` and `memledger diff` as a user runs them: a rewrite is written with
# its JSON and HTML reports; a refused path or a failed verification writes nothing (exit
# 2 and 4); `diff` of two plan reports prints the figures and their parts; bad input is
# exit 2 naming the file or field. Tests that share files are ordered by fixtures.
set(OPT_DIR ${CMAKE_CURRENT_BINARY_DIR}/optimize_cli)
set(OPT_DATA ${PROJECT_SOURCE_DIR}/tests/data/onnx)

# A fresh folder with a copy of the model (the overwrite test points -o at it).
add_test(NAME cli.optimize.setup COMMAND ${CMAKE_COMMAND} -E rm -rf ${OPT_DIR})
add_test(NAME cli.optimize.setup_dir COMMAND ${CMAKE_COMMAND} -E make_directory ${OPT_DIR})
add_test(NAME cli.optimize.setup_copy COMMAND ${CMAKE_COMMAND} -E copy ${OPT_DATA}/affine_distinct.onnx ${OPT_DATA}/conv_bn_relu.onnx ${OPT_DIR})
set_tests_properties(cli.optimize.setup PROPERTIES FIXTURES_SETUP optimize_dir)
set_tests_properties(cli.optimize.setup_dir PROPERTIES FIXTURES_SETUP optimize_dir DEPENDS cli.optimize.setup)
set_tests_properties(cli.optimize.setup_copy PROPERTIES FIXTURES_SETUP optimize_dir DEPENDS cli.optimize.setup_dir)

# A successful rewrite: BatchNormalization folded into the Conv, verified, three files written.
memledger_cli_test(optimize.writes_model
  ARGS optimize ${OPT_DIR}/conv_bn_relu.onnx -o ${OPT_DIR}/out.onnx --json ${OPT_DIR}/opt.json
       --html ${OPT_DIR}/opt.html
  OUTPUT "model: .*conv_bn_relu.onnx \\(6 nodes → 5\\)" "fold-batchnorm +1 +64"
         "verification \\(seed 1, rtol 0.0001, fast kernels\\)"
         "output 'y': max\\|diff\\| [^\n]*\\(ok\\)"
         "peak-live +9664 +9408 +-256 \\| +-64 +-192 +\\+0"
         "wrote .*out.onnx" "wrote .*opt.json" "wrote .*opt.html")
set_tests_properties(cli.optimize.writes_model PROPERTIES FIXTURES_REQUIRED optimize_dir FIXTURES_SETUP optimize_out)
memledger_cli_test(optimize.written_model_reads_back ARGS inspect ${OPT_DIR}/out.onnx
  OUTPUT "nodes \\(5\\)" "Conv" NOT_OUTPUT "BatchNormalization")
set_tests_properties(cli.optimize.written_model_reads_back PROPERTIES FIXTURES_REQUIRED optimize_out)
memledger_check_file(optimize.json_has_both_plans ${OPT_DIR}/opt.json FIXTURES optimize_out
  CONTAINS "\"before\": {" "\"after\": {" "\"peak_live_bytes\": 9664" "\"peak_live_bytes\": 9408"
           "\"name\": \"fold-batchnorm\"" "\"kernels\": \"fast\"")
# The verification may run the reference kernels instead, and says so.
memledger_cli_test(optimize.verifies_with_reference_kernels
  ARGS optimize ${OPT_DIR}/conv_bn_relu.onnx -o ${OPT_DIR}/out_reference.onnx --kernels reference
       --json ${OPT_DIR}/opt_reference.json
  OUTPUT "verification \\(seed 1, rtol 0.0001, reference kernels\\)" "output 'y': max\\|diff\\| [^\n]*\\(ok\\)")
set_tests_properties(cli.optimize.verifies_with_reference_kernels PROPERTIES FIXTURES_REQUIRED optimize_dir
                     FIXTURES_SETUP optimize_reference)
memledger_check_file(optimize.json_names_reference_kernels ${OPT_DIR}/opt_reference.json FIXTURES optimize_reference
  CONTAINS "\"kernels\": \"reference\"")
# --html: before and after side by side, each with its own arena picture and peak label.
memledger_check_file(optimize.html_has_both_plans ${OPT_DIR}/opt.html FIXTURES optimize_out
  CONTAINS "<svg[^>]*id=\"before-arena\"" "<svg[^>]*id=\"after-arena\"" "id=\"before-peak-label\"[^>]*data-bytes=\"9664\""
           "id=\"after-peak-label\"[^>]*data-bytes=\"9408\"" "conv_bn_relu.onnx" "out.onnx")

# `diff` of the plans of the input and the written model says what optimize said.
memledger_cli_test(optimize.plan_before ARGS plan ${OPT_DIR}/conv_bn_relu.onnx --json ${OPT_DIR}/before.json
  OUTPUT "Ledger")
memledger_cli_test(optimize.plan_after ARGS plan ${OPT_DIR}/out.onnx --json ${OPT_DIR}/after.json
  OUTPUT "Ledger")
set_tests_properties(cli.optimize.plan_before cli.optimize.plan_after PROPERTIES
                     FIXTURES_REQUIRED optimize_out FIXTURES_SETUP optimize_reports)
memledger_cli_test(diff.of_optimized_model ARGS diff ${OPT_DIR}/before.json ${OPT_DIR}/after.json
  OUTPUT "before: .*conv_bn_relu.onnx\n" "after: +.*out.onnx\n"
         "figure +before +after +change \\| +constants +layout +lifetimes"
         "logical +11416 +10328 +-1088 \\| +-64 +\\+0 +-1024"
         "physical +9792 +9536 +-256 \\| +-64 +-192 +\\+0"
         "peak-live +9664 +9408 +-256 \\| +-64 +-192 +\\+0")
set_tests_properties(cli.diff.of_optimized_model PROPERTIES FIXTURES_REQUIRED optimize_reports)

# The teaching example's expanded model beside variant C (plan reports the demo writes).
memledger_cli_test(diff.demo_expanded ARGS demo --json ${OPT_DIR}/demo_expanded.json OUTPUT "wrote .*demo_expanded.json")
memledger_cli_test(diff.demo_c ARGS demo --variant C --json ${OPT_DIR}/demo_c.json OUTPUT "wrote .*demo_c.json")
memledger_cli_test(diff.demo_optimized ARGS demo --variant optimized --json ${OPT_DIR}/demo_optimized.json
  OUTPUT "wrote .*demo_optimized.json")
set_tests_properties(cli.diff.demo_expanded cli.diff.demo_c cli.diff.demo_optimized PROPERTIES
                     FIXTURES_REQUIRED optimize_dir FIXTURES_SETUP demo_reports)
memledger_cli_test(diff.expanded_to_variant_c ARGS diff ${OPT_DIR}/demo_expanded.json ${OPT_DIR}/demo_c.json
  OUTPUT "after: +teaching C: B \\+ output written over x"
         "logical +33600 +13464 +-20136 \\| +-13416 +\\+0 +-6720"
         "physical +35840 +8992 +-26848 \\| +-13416 +-6712 +-6720"
         "peak-live +26880 +8992 +-17888 \\| +-6696 +-4472 +-6720")
set_tests_properties(cli.diff.expanded_to_variant_c PROPERTIES FIXTURES_REQUIRED demo_reports)
# The same figures as the demo's rewrite story (section 8, tests/cli/demo_tests.cmake).
memledger_cli_test(diff.expanded_to_optimized ARGS diff ${OPT_DIR}/demo_expanded.json ${OPT_DIR}/demo_optimized.json
  OUTPUT "after: +teaching: Mul \\+ Add after optimize"
         "logical +33600 +20184 +-13416 \\| +-13416 +\\+0 +\\+0"
         "physical +35840 +17952 +-17888 \\| +-13416 +-4472 +\\+0"
         "peak-live +26880 +17936 +-8944 \\| +-6708 +-2236 +\\+0")
set_tests_properties(cli.diff.expanded_to_optimized PROPERTIES FIXTURES_REQUIRED demo_reports)

# The input model is never overwritten, and a refusal writes none of the other outputs.
memledger_cli_test(optimize.refuses_to_overwrite_input
  ARGS optimize ${OPT_DIR}/conv_bn_relu.onnx -o ${OPT_DIR}/./conv_bn_relu.onnx --json ${OPT_DIR}/refused.json
  EXIT_CODE 2 OUTPUT "-o .*conv_bn_relu.onnx: refusing to overwrite the input file" NOT_OUTPUT "\nwrote ")
set_tests_properties(cli.optimize.refuses_to_overwrite_input PROPERTIES FIXTURES_REQUIRED optimize_dir
                     FIXTURES_SETUP optimize_refused)
memledger_check_file(optimize.refusal_wrote_nothing ${OPT_DIR}/refused.json ABSENT FIXTURES optimize_refused)
memledger_cli_test(optimize.json_over_output
  ARGS optimize ${OPT_DIR}/conv_bn_relu.onnx -o ${OPT_DIR}/same.onnx --json ${OPT_DIR}/same.onnx
  EXIT_CODE 2 OUTPUT "--json .*same.onnx: the same file as -o" NOT_OUTPUT "\nwrote ")
set_tests_properties(cli.optimize.json_over_output PROPERTIES FIXTURES_REQUIRED optimize_dir)

# A failed verification: folding BatchNormalization into the Conv rounds differently, so
# demanding bit-equal outputs (--tolerance 0) fails; exit 4 and no file at all.
memledger_cli_test(optimize.verification_fails
  ARGS optimize ${OPT_DIR}/conv_bn_relu.onnx -o ${OPT_DIR}/failed.onnx --json ${OPT_DIR}/failed.json
       --html ${OPT_DIR}/failed.html --tolerance 0
  EXIT_CODE 4 OUTPUT "fold-batchnorm +1" "EXCEEDS TOLERANCE" "computes different numbers; nothing written"
  NOT_OUTPUT "\nwrote ")
set_tests_properties(cli.optimize.verification_fails PROPERTIES FIXTURES_REQUIRED optimize_dir
                     FIXTURES_SETUP optimize_failed)
foreach(file failed.onnx failed.json failed.html)
  memledger_check_file(optimize.verification_failure_wrote_no_${file} ${OPT_DIR}/${file} ABSENT
                       FIXTURES optimize_failed)
endforeach()

memledger_cli_test(optimize.unknown_pass
  ARGS optimize ${OPT_DATA}/conv_bn_relu.onnx -o ${OPT_DIR}/never.onnx --passes fuse-affine,frobnicate
  EXIT_CODE 2 OUTPUT "unknown pass 'frobnicate' \\(known: fold-constants, fold-batchnorm, fuse-affine" NOT_OUTPUT "\nwrote ")
memledger_cli_test(optimize.missing_output ARGS optimize ${OPT_DATA}/conv_bn_relu.onnx EXIT_CODE 2
  OUTPUT "--output is required")
memledger_cli_test(optimize.bad_model ARGS optimize ${OPT_DATA}/bad_truncated.onnx -o ${OPT_DIR}/never.onnx
  EXIT_CODE 2 OUTPUT "bad_truncated.onnx" NOT_OUTPUT "\nwrote ")

# diff: bad input is exit 2 and names the file and the field.
memledger_cli_test(diff.not_json ARGS diff ${PROJECT_SOURCE_DIR}/tests/data/allocate/chain.csv
                   ${PROJECT_SOURCE_DIR}/tests/data/report/no_ledger.json
  EXIT_CODE 2 OUTPUT "chain.csv: not JSON")
memledger_cli_test(diff.no_ledger ARGS diff ${PROJECT_SOURCE_DIR}/tests/data/report/no_ledger.json
                   ${PROJECT_SOURCE_DIR}/tests/data/report/no_ledger.json
  EXIT_CODE 2 OUTPUT "no_ledger.json: no 'ledger' \\(not a memledger plan report\\)")
memledger_cli_test(diff.field_missing ARGS diff ${PROJECT_SOURCE_DIR}/tests/data/report/no_peak.json
                   ${PROJECT_SOURCE_DIR}/tests/data/report/no_peak.json
  EXIT_CODE 2 OUTPUT "no_peak.json ledger: field 'peak_live_bytes' missing or not an integer")
memledger_cli_test(diff.missing_file ARGS diff ${OPT_DIR}/no_such.json ${OPT_DIR}/no_such.json
  EXIT_CODE 2 OUTPUT "no_such.json: no such file")
memledger_cli_test(diff.one_argument ARGS diff ${PROJECT_SOURCE_DIR}/tests/data/report/no_ledger.json
  EXIT_CODE 2 OUTPUT "AFTER is required")
