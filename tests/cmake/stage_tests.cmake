# The stage check itself: a plan source that includes an exec header must be refused, and
# the real tree must pass (configure already enforced it; this keeps the proof visible).
add_test(NAME stage.back_edge_is_refused
         COMMAND ${CMAKE_COMMAND} -DROOT=${CMAKE_CURRENT_SOURCE_DIR}/cmake/back_edge -DSTAGE=plan "-DALLOWED=ir;device"
                 -P ${PROJECT_SOURCE_DIR}/cmake/StageIncludes.cmake)
set_tests_properties(stage.back_edge_is_refused PROPERTIES
  PASS_REGULAR_EXPRESSION "may not include these:.*src/plan/planner_that_runs_kernels.cpp: #include \"memledger/exec/interpreter.h\"")
add_test(NAME stage.allowed_include_passes
         COMMAND ${CMAKE_COMMAND} -DROOT=${CMAKE_CURRENT_SOURCE_DIR}/cmake/back_edge -DSTAGE=ir "-DALLOWED=core;device"
                 -P ${PROJECT_SOURCE_DIR}/cmake/StageIncludes.cmake)
set_tests_properties(stage.allowed_include_passes PROPERTIES PASS_REGULAR_EXPRESSION "stage 'ir': no back-edge")
# The fit stage (issue 34): above plan, so a plan source that includes a fit header is
# refused, and fit's own includes of plan pass.
add_test(NAME stage.plan_may_not_include_fit
         COMMAND ${CMAKE_COMMAND} -DROOT=${CMAKE_CURRENT_SOURCE_DIR}/cmake/back_edge -DSTAGE=plan "-DALLOWED=ir;device"
                 -P ${PROJECT_SOURCE_DIR}/cmake/StageIncludes.cmake)
set_tests_properties(stage.plan_may_not_include_fit PROPERTIES
  PASS_REGULAR_EXPRESSION "may not include these:.*src/plan/planner_that_schedules.cpp: #include \"memledger/fit/schedule.h\"")
add_test(NAME stage.fit_may_include_plan
         COMMAND ${CMAKE_COMMAND} -DROOT=${CMAKE_CURRENT_SOURCE_DIR}/cmake/back_edge -DSTAGE=fit "-DALLOWED=plan;ir;device;core"
                 -P ${PROJECT_SOURCE_DIR}/cmake/StageIncludes.cmake)
set_tests_properties(stage.fit_may_include_plan PROPERTIES PASS_REGULAR_EXPRESSION "stage 'fit': no back-edge")
