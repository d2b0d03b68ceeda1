# Included by ctest after gtest_discover_tests has listed the GPU tests in
# gpu_tests_TESTS: each asks for one GPU.
foreach(bc_test IN LISTS gpu_tests_TESTS)
  set_tests_properties("${bc_test}" PROPERTIES RESOURCE_GROUPS "gpus:1")
endforeach()
