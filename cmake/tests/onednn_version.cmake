# The model's oneDNN version check (cmake/Onednn.cmake), run with cmake -P:
#   cmake -DDNNL_DIR=<a dnnl CMake config directory> -P cmake/tests/onednn_version.cmake
# 2.6, 3.0 and 3.13 pass and 2.5 fails with its one line; with DNNL_DIR, a
# configure finds that oneDNN (3.x through PyPI's onednn-devel, 2.6 through
# Debian's libdnnl-dev) with the project's own find and succeeds.
include(${CMAKE_CURRENT_LIST_DIR}/../Onednn.cmake)
if(DEFINED CHECK_ONLY)  # the child run: the check on one version
  bc_check_onednn_version("${CHECK_ONLY}")
  return()
endif()
foreach(version 2.6 2.6.3 3.0 3.2.0 3.13.3 2.5 "")
  execute_process(COMMAND ${CMAKE_COMMAND} -DCHECK_ONLY=${version} -P ${CMAKE_CURRENT_LIST_FILE}
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
  if(version VERSION_GREATER_EQUAL 2.6 AND NOT rc EQUAL 0)
    message(FATAL_ERROR "oneDNN ${version} was refused: ${err}")
  elseif(NOT version VERSION_GREATER_EQUAL 2.6 AND (rc EQUAL 0 OR NOT err MATCHES "needs oneDNN 2.6 or later"))
    message(FATAL_ERROR "oneDNN '${version}' was not refused with the check's line (exit ${rc}): ${err}")
  endif()
endforeach()
message(STATUS "onednn_version: 2.6 to 3.13 accepted, 2.5 and none refused")
if(DNNL_DIR)
  set(build ${CMAKE_CURRENT_BINARY_DIR}/onednn-find-build)
  file(REMOVE_RECURSE ${build})
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${CMAKE_CURRENT_LIST_DIR}/onednn_find -B ${build} -Ddnnl_DIR=${DNNL_DIR}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  file(REMOVE_RECURSE ${build})
  string(REGEX MATCH "oneDNN [0-9.]+ for the model" found "${out}")
  if(NOT rc EQUAL 0 OR NOT found)
    message(FATAL_ERROR "a configure with dnnl_DIR=${DNNL_DIR} failed (exit ${rc}): ${err}")
  endif()
  message(STATUS "onednn_version: a configure found ${found} through ${DNNL_DIR}")
endif()
