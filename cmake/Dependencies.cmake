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

# PyTorch itself (libtorch): Debian's libtorch-dev by default; -DTorch_DIR=
# <libtorch>/share/cmake/Torch builds against any other (a pip wheel's, with
# CUDA). Without it the pytorch engines report "not built" and their tests
# skip with that reason.
set(BACKENDCHECK_WITH_TORCH AUTO CACHE STRING "Build the PyTorch engine: AUTO, ON or OFF")
set_property(CACHE BACKENDCHECK_WITH_TORCH PROPERTY STRINGS AUTO ON OFF)
set(BC_HAVE_TORCH OFF)
if(NOT BACKENDCHECK_WITH_TORCH STREQUAL "OFF")
  find_package(Torch QUIET)
  if(Torch_FOUND OR TORCH_FOUND)
    set(BC_HAVE_TORCH ON)
    message(STATUS "backendcheck: PyTorch engine ON (${TORCH_INSTALL_PREFIX})")
  elseif(BACKENDCHECK_WITH_TORCH STREQUAL "ON")
    message(FATAL_ERROR "BACKENDCHECK_WITH_TORCH=ON but libtorch was not found (install libtorch-dev or set Torch_DIR)")
  else()
    message(STATUS "backendcheck: PyTorch engine OFF (libtorch not found)")
  endif()
endif()
# The interpreter whose torch the Python-only probes use (Debian's
# python3-torch imports with /usr/bin/python3).
set(BACKENDCHECK_TORCH_PYTHON "${Python3_EXECUTABLE}" CACHE STRING "Python interpreter that imports torch")
