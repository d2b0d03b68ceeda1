# Every dependency comes from the system (Debian packages, the CUDA install),
# found through its own CMake config or pkg-config. Nothing is vendored.
string(TOUPPER "${CMAKE_BUILD_TYPE}" BC_BUILD_TYPE_UPPER)

find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(GTest 1.11 REQUIRED)
find_package(benchmark REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
# oneDNN's config asks for OpenCL (Debian builds it with the OpenCL GPU runtime).
find_package(dnnl 2.6 REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(XXHASH REQUIRED IMPORTED_TARGET libxxhash>=0.8)

# The generator and the report need Python 3.11 (tomllib) with Jinja2.
find_package(Python3 3.11 REQUIRED COMPONENTS Interpreter)
execute_process(COMMAND ${Python3_EXECUTABLE} -c "import jinja2, tomllib"
  RESULT_VARIABLE BC_PY_OK OUTPUT_QUIET ERROR_QUIET)
if(NOT BC_PY_OK EQUAL 0)
  message(FATAL_ERROR "${Python3_EXECUTABLE} cannot import jinja2 and tomllib: install python3-jinja2, "
                      "or pass -DPython3_EXECUTABLE=<a Python 3.11+ that has Jinja2>")
endif()

set(BC_HAVE_CUDA OFF)
if(NOT BACKENDCHECK_WITH_CUDA STREQUAL "OFF")
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV CUDNN_ROOT PATH_SUFFIXES include)
    find_library(CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} ENV CUDNN_ROOT PATH_SUFFIXES lib64 lib)
  endif()
  if(CUDAToolkit_FOUND AND CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY)
    # The native CUDA kernels need nvcc. Ampere and Hopper by default
    # (-DCMAKE_CUDA_ARCHITECTURES=... for others).
    if(NOT CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES 80 90)
    endif()
    set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
    # CMake 3.25 does not know nvcc's C++20 dialect; the kernels need C++17.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    enable_language(CUDA)
    add_library(CUDNN::cudnn UNKNOWN IMPORTED)
    set_target_properties(CUDNN::cudnn PROPERTIES
      IMPORTED_LOCATION ${CUDNN_LIBRARY} INTERFACE_INCLUDE_DIRECTORIES ${CUDNN_INCLUDE_DIR})
    set(BC_HAVE_CUDA ON)
    message(STATUS "backendcheck: GPU engines ON (CUDA ${CUDAToolkit_VERSION}, cuDNN ${CUDNN_LIBRARY})")
  elseif(BACKENDCHECK_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "BACKENDCHECK_WITH_CUDA=ON but the CUDA toolkit (found: ${CUDAToolkit_FOUND}) "
                        "or cuDNN (header: ${CUDNN_INCLUDE_DIR}, library: ${CUDNN_LIBRARY}) is missing")
  else()
    message(STATUS "backendcheck: GPU engines OFF (CUDA toolkit or cuDNN not found)")
  endif()
endif()
