# Included by ctest after gtest_discover_tests has listed the GPU tests in
# gpu_tests_TESTS, and after ${BC_GENERATED_DIR}/gpu_resources.cmake: each
# takes a whole GPU (its selection and timing facts are evidence).
foreach(bc_test IN LISTS gpu_tests_TESTS)
  bc_gpu_test("${bc_test}" ALONE)
endforeach()
