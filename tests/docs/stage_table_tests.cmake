# docs/architecture.md's stage table against the stage targets' links: at generate time the
# links of every memledger_<stage> target are written out (the targets' LINK_LIBRARIES, what
# memledger_stage() in CMakeLists.txt gave them), and the test compares each stage's row of
# the `| stage | depends on |` table with them. A fixture with wrong rows proves the check
# refuses what differs and names it.
set(MEMLEDGER_STAGE_LINKS_FILE ${CMAKE_CURRENT_BINARY_DIR}/docs/stage_links.cmake)
set(links_content "set(STAGES \"${MEMLEDGER_STAGES}\")\n")
foreach(stage ${MEMLEDGER_STAGES})
  string(APPEND links_content "set(LINKS_${stage} \"$<TARGET_PROPERTY:memledger_${stage},LINK_LIBRARIES>\")\n")
endforeach()
file(GENERATE OUTPUT ${MEMLEDGER_STAGE_LINKS_FILE} CONTENT "${links_content}")

add_test(NAME docs.architecture_stage_table_matches_links
         COMMAND ${CMAKE_COMMAND} -DLINKS=${MEMLEDGER_STAGE_LINKS_FILE} -DDOC=${PROJECT_SOURCE_DIR}/docs/architecture.md
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_stage_table.cmake)
set_tests_properties(docs.architecture_stage_table_matches_links PROPERTIES
  PASS_REGULAR_EXPRESSION "docs/architecture.md: the stage table matches the links of [0-9]+ stages")

add_test(NAME docs.wrong_stage_table_is_refused
         COMMAND ${CMAKE_COMMAND} -DLINKS=${MEMLEDGER_STAGE_LINKS_FILE}
                 -DDOC=${CMAKE_CURRENT_SOURCE_DIR}/docs/wrong_stage_table.md
                 -P ${CMAKE_CURRENT_SOURCE_DIR}/docs/check_stage_table.cmake)
set_tests_properties(docs.wrong_stage_table_is_refused PROPERTIES
  PASS_REGULAR_EXPRESSION
  "stage 'core': the table names 'toml', which is neither a stage nor a library core links.*stage 'device': the table says core, ir but CMake links core \\(not linked: ir\\).*stage 'lint': in CMake, not in the table.*stage 'passes': the table says nothing but CMake links ir \\(not in the table: ir\\).*stage 'banks': in the table, not a stage in CMake")
