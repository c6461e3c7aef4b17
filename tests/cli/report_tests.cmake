# Reports: the demo writes HTML and JSON; the HTML is rendered in headless Chromium
# (Debian's `chromium`) and checked against the JSON by scripts/browser_test.py, which
# also leaves screenshots in tests/browser/ of the build folder.
memledger_cli_test(demo_writes_reports
  ARGS demo --variant A --html ${CMAKE_CURRENT_BINARY_DIR}/demo_A.html --json ${CMAKE_CURRENT_BINARY_DIR}/demo_A.json
  OUTPUT "wrote .*demo_A.html" "wrote .*demo_A.json")
memledger_cli_test(demo_bad_variant ARGS demo --variant E --html ${CMAKE_CURRENT_BINARY_DIR}/never.html
  EXIT_CODE 2 OUTPUT "--variant" NOT_OUTPUT "wrote")

set(MEMLEDGER_BROWSER_PYTHON "/usr/bin/python3" CACHE FILEPATH "Python that runs scripts/browser_test.py")
if(DEFINED MEMLEDGER_CORPUS_DIR)
  set(_memledger_report_corpus "${MEMLEDGER_CORPUS_DIR}")
else()
  set(_memledger_report_corpus "${PROJECT_BINARY_DIR}/corpus")
endif()
foreach(case teaching teaching-C compare optimize resnet18 banks)
  add_test(NAME report.browser.${case}
           COMMAND ${MEMLEDGER_BROWSER_PYTHON} ${PROJECT_SOURCE_DIR}/scripts/browser_test.py
                   --memledger $<TARGET_FILE:memledger_cli> --out ${CMAKE_CURRENT_BINARY_DIR}/browser
                   --case ${case} --corpus ${_memledger_report_corpus})
  # One Chromium at a time; exit 77 = skipped (resnet18 without a corpus).
  set_tests_properties(report.browser.${case} PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77 RESOURCE_LOCK chromium
                       LABELS browser)
endforeach()
unset(_memledger_report_corpus)
