# Which GPU a GPU test runs on, and who runs beside it: one ctest resource
# group per GPU (resource `gpus`, one entry per GPU in the resource spec that
# ci/gpu-resource-spec.py writes, each with the same number of slots).
#
# bc_gpu_test(TEST ALONE|SHARED [LOCK lock...])   (read by ctest, after discovery)
#   ALONE   the test's timings (or a benchmark search's winner) are evidence:
#           it takes every slot of one GPU, so nothing else runs on its GPU.
#   SHARED  it takes one slot: up to `slots` such tests share a GPU.
#   LOCK    the test's own RESOURCE_LOCKs, kept in either case.
#   With a spec (BC_GPU_SLOTS set): RESOURCE_GROUPS "gpus:N" only; the test
#   process makes its allocated GPU (CTEST_RESOURCE_GROUP_0_GPUS) its only
#   CUDA device (suites/test_main.cc, the probes' runner).
#   Without one, ctest ignores RESOURCE_GROUPS and every test sees the first
#   GPU: an ALONE test is RUN_SERIAL (alone on the machine, as before there
#   were resource groups), a SHARED test runs beside others on that GPU.
#
# bc_gpu_resources_configure()                     (at configure time)
#   Reads BACKENDCHECK_GPU_RESOURCE_SPEC (a cache path, empty by default),
#   else the environment's BACKENDCHECK_RESOURCE_SPEC at this configure (as
#   ./backendcheck and ci/nightly-gpu.sh set it): checks the spec, makes it
#   the one plain `ctest` uses (CTEST_RESOURCE_SPEC_FILE, written into
#   CTestTestfile.cmake and the cache), and writes
#   ${BC_GENERATED_DIR}/gpu_resources.cmake, which the GPU tests' ctest
#   scripts include: BC_GPU_SLOTS and this file.

function(bc_gpu_test test kind)
  cmake_parse_arguments(PARSE_ARGV 2 G "" "" "LOCK")
  if(kind STREQUAL "ALONE")
    set(slots 1)
    if(BC_GPU_SLOTS)
      set(slots ${BC_GPU_SLOTS})
    endif()
  elseif(kind STREQUAL "SHARED")
    set(slots 1)
  else()
    message(FATAL_ERROR "bc_gpu_test(${test}): ALONE or SHARED, not '${kind}'")
  endif()
  set(props RESOURCE_GROUPS "gpus:${slots}")
  if(NOT BC_GPU_SLOTS AND kind STREQUAL "ALONE")
    list(APPEND props RUN_SERIAL TRUE)
  endif()
  if(G_LOCK)
    list(JOIN G_LOCK "\;" locks)
    list(APPEND props RESOURCE_LOCK "${locks}")
  endif()
  set_tests_properties("${test}" PROPERTIES ${props})
endfunction()

function(bc_gpu_resources_configure)
  set(BACKENDCHECK_GPU_RESOURCE_SPEC "" CACHE FILEPATH
      "ctest resource spec of this machine's GPUs (ci/gpu-resource-spec.py); empty: GPU tests on the first GPU")
  set(spec "${BACKENDCHECK_GPU_RESOURCE_SPEC}")
  if(NOT spec)
    set(spec "$ENV{BACKENDCHECK_RESOURCE_SPEC}")
  endif()
  set(slots "")
  if(spec)
    if(NOT EXISTS "${spec}")
      message(FATAL_ERROR "BACKENDCHECK_GPU_RESOURCE_SPEC: ${spec}: no such file (ci/gpu-resource-spec.py writes it)")
    endif()
    file(READ "${spec}" text)
    string(JSON count ERROR_VARIABLE err LENGTH "${text}" local 0 gpus)
    if(err OR count EQUAL 0)
      message(FATAL_ERROR "${spec}:1: local[0].gpus: expected a list of GPUs (ci/gpu-resource-spec.py writes it)")
    endif()
    math(EXPR last "${count} - 1")
    foreach(i RANGE ${last})
      string(JSON s ERROR_VARIABLE err GET "${text}" local 0 gpus ${i} slots)
      if(err OR NOT s MATCHES "^[1-9][0-9]*$")
        message(FATAL_ERROR "${spec}:1: local[0].gpus[${i}].slots: expected a positive number")
      endif()
      if(slots AND NOT s EQUAL slots)
        message(FATAL_ERROR "${spec}:1: local[0].gpus[${i}].slots: ${s}, but GPU 0 has ${slots}: "
                            "a test alone on its GPU asks for every slot of one, so all GPUs need the same")
      endif()
      set(slots ${s})
    endforeach()
    # Written into CTestTestfile.cmake: a plain `ctest -j N` allocates GPUs.
    set(CTEST_RESOURCE_SPEC_FILE "${spec}" CACHE INTERNAL "")
  else()
    unset(CTEST_RESOURCE_SPEC_FILE CACHE)
  endif()
  file(CONFIGURE OUTPUT ${BC_GENERATED_DIR}/gpu_resources.cmake CONTENT
       "# Generated at configure time from BACKENDCHECK_GPU_RESOURCE_SPEC (cmake/GpuResources.cmake).\nset(BC_GPU_SLOTS \"@slots@\")\ninclude(\"@CMAKE_CURRENT_FUNCTION_LIST_DIR@/GpuResources.cmake\")\n"
       @ONLY)
endfunction()
