# The stage check (DESIGN.md §2): a stage's sources and public headers may include only
# headers of the stage itself and of the stages it depends on, directly or through others.
# Static libraries would link a back-edge anyway (everything sits in one include tree), so
# the build refuses it here, at configure time, naming the file and the include.
#
#  - from CMakeLists.txt: memledger_check_stage_includes(NAME "DEP;DEP") after each stage
#    (stages are declared in dependency order);
#  - as a script, for the test that proves a back-edge fails:
#      cmake -DROOT=<tree with src/ and include/> -DSTAGE=plan "-DALLOWED=ir;device" -P StageIncludes.cmake

if(CMAKE_SCRIPT_MODE_FILE)
  cmake_policy(VERSION 3.22)
endif()

function(memledger_stage_include_violations root stage allowed out)
  file(GLOB_RECURSE files ${root}/src/${stage}/*.cpp ${root}/src/${stage}/*.h ${root}/include/memledger/${stage}/*.h)
  set(found "")
  foreach(file ${files})
    file(STRINGS ${file} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"")
    foreach(line ${lines})
      # "memledger/<stage>/x.h" (public) or "<stage>/x.h" (another stage's private header)
      if(line MATCHES "include[ \t]*\"(memledger/)?([a-z_]+)/[^\"]+\"")
        set(target_stage ${CMAKE_MATCH_2})
        if(NOT target_stage STREQUAL stage AND NOT target_stage IN_LIST allowed
           AND EXISTS ${root}/src/${target_stage})
          file(RELATIVE_PATH relative ${root} ${file})
          string(STRIP "${line}" line)
          list(APPEND found "${relative}: ${line}")
        endif()
      endif()
    endforeach()
  endforeach()
  set(${out} "${found}" PARENT_SCOPE)
endfunction()

function(memledger_check_stage_includes stage deps)
  set(closure ${deps})
  foreach(dep ${deps})
    get_property(dep_closure GLOBAL PROPERTY MEMLEDGER_STAGE_CLOSURE_${dep})
    list(APPEND closure ${dep_closure})
  endforeach()
  list(REMOVE_DUPLICATES closure)
  set_property(GLOBAL PROPERTY MEMLEDGER_STAGE_CLOSURE_${stage} "${closure}")
  memledger_stage_include_violations(${PROJECT_SOURCE_DIR} ${stage} "${closure}" found)
  if(found)
    list(JOIN found "\n  " listed)
    message(FATAL_ERROR "stage '${stage}' may not include these (it depends only on: ${closure}):\n  ${listed}\n"
                        "Move the code to the stage it belongs to, or change the arrows in CMakeLists.txt and DESIGN.md.")
  endif()
endfunction()

if(CMAKE_SCRIPT_MODE_FILE AND DEFINED STAGE)
  memledger_stage_include_violations(${ROOT} ${STAGE} "${ALLOWED}" found)
  if(found)
    list(JOIN found "\n  " listed)
    message(FATAL_ERROR "stage '${STAGE}' may not include these:\n  ${listed}")
  endif()
  message(STATUS "stage '${STAGE}': no back-edge")
endif()
