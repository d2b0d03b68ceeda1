# Every dependency comes from the system (Debian packages, the CUDA install),
# found through its own CMake config or pkg-config. Nothing is vendored.
string(TOUPPER "${CMAKE_BUILD_TYPE}" BC_BUILD_TYPE_UPPER)

find_package(OpenMP REQUIRED COMPONENTS CXX)
find_package(GTest 1.11 REQUIRED)
find_package(benchmark REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
# The oneDNN the model's engine runs on: the system's (Debian's libdnnl-dev,
# whose config asks for OpenCL), or the prefix BACKENDCHECK_ONEDNN_ROOT
# names (include/oneapi/dnnl, lib/libdnnl.so.*), such as the environment
# ./backendcheck installs PyPI's onednn-cpu-gomp and onednn-devel-cpu-gomp
# into (requirements/onednn.txt). oneDNN 2.6 and 3.x are both supported
# (backends/onednn). The prefix is searched anew at every configure.
set(BACKENDCHECK_ONEDNN_ROOT "" CACHE PATH "Prefix of the oneDNN the model runs on; empty: the system's")
unset(BC_DNNL_INCLUDE_DIR CACHE)
unset(BC_DNNL_LIBRARY CACHE)
if(BACKENDCHECK_ONEDNN_ROOT)
  find_path(BC_DNNL_INCLUDE_DIR oneapi/dnnl/dnnl.hpp PATHS ${BACKENDCHECK_ONEDNN_ROOT}/include NO_DEFAULT_PATH)
  find_library(BC_DNNL_LIBRARY NAMES dnnl libdnnl.so.3 libdnnl.so.2 PATHS ${BACKENDCHECK_ONEDNN_ROOT}/lib
               NO_DEFAULT_PATH)
  if(NOT BC_DNNL_INCLUDE_DIR OR NOT BC_DNNL_LIBRARY)
    message(FATAL_ERROR "BACKENDCHECK_ONEDNN_ROOT=${BACKENDCHECK_ONEDNN_ROOT} has no oneDNN "
                        "(header: ${BC_DNNL_INCLUDE_DIR}, library: ${BC_DNNL_LIBRARY})")
  endif()
  add_library(DNNL::dnnl SHARED IMPORTED)
  set_target_properties(DNNL::dnnl PROPERTIES IMPORTED_LOCATION ${BC_DNNL_LIBRARY}
    INTERFACE_INCLUDE_DIRECTORIES ${BC_DNNL_INCLUDE_DIR})
  message(STATUS "backendcheck: oneDNN for the model from ${BC_DNNL_LIBRARY}")
else()
  include(${CMAKE_CURRENT_LIST_DIR}/Onednn.cmake)
  bc_find_system_onednn()  # 2.6 or later, 3.x included
endif()
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

# --- PyTorch under test --------------------------------------------------------
# Found the way PyTorch's C++ extensions find it: from the interpreter that
# imports it (BACKENDCHECK_TORCH_PYTHON; ./backendcheck --torch PYTHON), whose
# torch.utils.cmake_prefix_path holds TorchConfig.cmake, so that libtorch and
# the Python probes come from one install (cmake/torch_info.py). Debian's
# python3-torch has no such folder: its libtorch-dev's config is on the system
# path, and its version must match. Without it the pytorch engines report
# "not built" and their tests skip with that reason.
set(BACKENDCHECK_TORCH_PYTHON "" CACHE FILEPATH "Python interpreter whose torch is under test")
# For a torch whose environment the harness does not manage (Debian's): the
# wheels of the probes' pure-Python packages (requirements/torch.txt's
# expecttest, opt-einsum), joined by ':', which every probe of that torch puts
# first on its sys.path (cli/installs.py probe_path). Built into the probes'
# tests, so that ctest run by hand finds them as ./backendcheck does.
set(BACKENDCHECK_PROBE_PATH "$ENV{BACKENDCHECK_PROBE_PATH}" CACHE STRING
    "Wheels of the probes' packages for an unmanaged torch, joined by ':'")
set(BACKENDCHECK_WITH_TORCH AUTO CACHE STRING "Build the PyTorch engine: AUTO, ON or OFF")
set_property(CACHE BACKENDCHECK_WITH_TORCH PROPERTY STRINGS AUTO ON OFF)
set(BC_HAVE_TORCH OFF)
set(BC_TORCH_CUDA "")
set(BC_TORCH_NVIDIA "")
if(NOT BACKENDCHECK_WITH_TORCH STREQUAL "OFF" AND BACKENDCHECK_TORCH_PYTHON)
  execute_process(COMMAND ${BACKENDCHECK_TORCH_PYTHON} ${CMAKE_SOURCE_DIR}/cmake/torch_info.py
    RESULT_VARIABLE bc_rc OUTPUT_VARIABLE bc_info ERROR_VARIABLE bc_err OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT bc_rc EQUAL 0)
    message(FATAL_ERROR "BACKENDCHECK_TORCH_PYTHON: ${bc_err}")
  endif()
  string(REPLACE "\n" ";" bc_info "${bc_info}")
  foreach(line IN LISTS bc_info)
    if(line MATCHES "^([a-z]+)=(.*)$")
      set(BC_TORCH_INFO_${CMAKE_MATCH_1} "${CMAKE_MATCH_2}")
    endif()
  endforeach()
  set(BC_TORCH_CUDA "${BC_TORCH_INFO_cuda}")
  set(BC_TORCH_NVIDIA "${BC_TORCH_INFO_nvidia}")
  if(EXISTS "${BC_TORCH_INFO_prefix}/Torch/TorchConfig.cmake")
    set(Torch_DIR "${BC_TORCH_INFO_prefix}/Torch" CACHE PATH "libtorch's CMake config" FORCE)
    # TorchConfig looks for Caffe2's config and for libc10, libtorch, ... with
    # PATHS, which come after the system's: with Debian's libtorch-dev also
    # installed it would link Debian's. The install's own prefixes go first.
    get_filename_component(bc_torch_root "${BC_TORCH_INFO_prefix}/../.." ABSOLUTE)
    list(PREPEND CMAKE_PREFIX_PATH "${bc_torch_root}" "${BC_TORCH_INFO_prefix}")
  endif()
  message(STATUS "backendcheck: torch ${BC_TORCH_INFO_version} (${BC_TORCH_INFO_local}) from "
                 "${BACKENDCHECK_TORCH_PYTHON}, CUDA '${BC_TORCH_CUDA}', C++11 ABI ${BC_TORCH_INFO_abi}")
endif()

# --- CUDA, cuDNN, cuBLAS ---------------------------------------------------------
# A CUDA build of torch from PyPI carries its own CUDA runtime, cuBLAS and
# cuDNN under site-packages/nvidia/, with versioned names only
# (libcudnn.so.9): the GPU engines link those, the same libraries libtorch
# loads, with their headers. Otherwise the CUDA install's (/usr/local/cuda).
# The GPU code's architectures: Ampere and Hopper by default.
set(BACKENDCHECK_CUDA_ARCHITECTURES "80;90" CACHE STRING "CUDA architectures of the GPU engines' kernels")
set(BC_HAVE_CUDA OFF)
if(NOT BACKENDCHECK_WITH_CUDA STREQUAL "OFF")
  if(NOT CUDAToolkit_ROOT AND EXISTS /usr/local/cuda)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  set(bc_nv_libs)
  set(bc_nv_includes)
  if(CUDAToolkit_FOUND AND BC_TORCH_CUDA AND BC_TORCH_NVIDIA)
    # cu13 wheels: nvidia/cu13/{include,lib}; cu12 wheels: nvidia/<library>/{include,lib}.
    file(GLOB bc_nv_libs LIST_DIRECTORIES true ${BC_TORCH_NVIDIA}/*/lib)
    file(GLOB bc_nv_includes LIST_DIRECTORIES true ${BC_TORCH_NVIDIA}/*/include)
    find_path(CUDNN_INCLUDE_DIR cudnn.h PATHS ${bc_nv_includes} NO_DEFAULT_PATH)
    find_library(CUDNN_LIBRARY NAMES libcudnn.so.9 cudnn PATHS ${bc_nv_libs} NO_DEFAULT_PATH)
    find_path(BC_CUBLAS_INCLUDE_DIR cublas_v2.h PATHS ${bc_nv_includes} NO_DEFAULT_PATH)
    find_library(BC_CUBLAS_LIBRARY NAMES libcublas.so.13 libcublas.so.12 cublas PATHS ${bc_nv_libs} NO_DEFAULT_PATH)
    find_library(BC_CUBLASLT_LIBRARY NAMES libcublasLt.so.13 libcublasLt.so.12 cublasLt PATHS ${bc_nv_libs}
                 NO_DEFAULT_PATH)
    find_library(BC_CUDART_LIBRARY NAMES libcudart.so.13 libcudart.so.12 cudart PATHS ${bc_nv_libs} NO_DEFAULT_PATH)
  elseif(CUDAToolkit_FOUND)
    find_path(CUDNN_INCLUDE_DIR cudnn.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV CUDNN_ROOT PATH_SUFFIXES include)
    find_library(CUDNN_LIBRARY cudnn HINTS ${CUDAToolkit_LIBRARY_DIR} ENV CUDNN_ROOT PATH_SUFFIXES lib64 lib)
  endif()
  if(CUDAToolkit_FOUND AND CUDNN_INCLUDE_DIR AND CUDNN_LIBRARY)
    set(CMAKE_CUDA_COMPILER ${CUDAToolkit_NVCC_EXECUTABLE})
    # CMake 3.25 does not know nvcc's C++20 dialect; the kernels need C++17.
    set(CMAKE_CUDA_STANDARD 17)
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    # One CUDA runtime per process: the shared one (the wheel's, which libtorch loads).
    set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
    set(CMAKE_CUDA_ARCHITECTURES ${BACKENDCHECK_CUDA_ARCHITECTURES})
    enable_language(CUDA)
    add_library(CUDNN::cudnn UNKNOWN IMPORTED)
    set_target_properties(CUDNN::cudnn PROPERTIES
      IMPORTED_LOCATION ${CUDNN_LIBRARY} INTERFACE_INCLUDE_DIRECTORIES ${CUDNN_INCLUDE_DIR})
    # bc_cuda_libs: the CUDA runtime and cuBLAS every GPU engine links.
    add_library(bc_cuda_libs INTERFACE)
    if(BC_CUBLAS_LIBRARY AND BC_CUBLASLT_LIBRARY AND BC_CUDART_LIBRARY AND BC_CUBLAS_INCLUDE_DIR)
      # The wheel's headers first, then the toolkit's for what the wheel lacks.
      target_include_directories(bc_cuda_libs SYSTEM INTERFACE ${BC_CUBLAS_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
      target_link_libraries(bc_cuda_libs INTERFACE ${BC_CUDART_LIBRARY} ${BC_CUBLAS_LIBRARY} ${BC_CUBLASLT_LIBRARY})
      set(bc_cuda_from "torch's wheel: ${BC_CUBLAS_LIBRARY}")
    else()
      target_link_libraries(bc_cuda_libs INTERFACE CUDA::cudart CUDA::cublas)
      set(bc_cuda_from "the CUDA toolkit ${CUDAToolkit_VERSION}")
    endif()
    set(BC_HAVE_CUDA ON)
    message(STATUS "backendcheck: GPU engines ON (nvcc ${CUDAToolkit_VERSION}, cuDNN ${CUDNN_LIBRARY}, "
                   "CUDA runtime and cuBLAS from ${bc_cuda_from})")
  elseif(BACKENDCHECK_WITH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "BACKENDCHECK_WITH_CUDA=ON but the CUDA toolkit (found: ${CUDAToolkit_FOUND}) "
                        "or cuDNN (header: ${CUDNN_INCLUDE_DIR}, library: ${CUDNN_LIBRARY}) is missing")
  else()
    message(STATUS "backendcheck: GPU engines OFF (CUDA toolkit or cuDNN not found)")
  endif()
endif()

if(NOT BACKENDCHECK_WITH_TORCH STREQUAL "OFF")
  # A CUDA build's Caffe2 config appends -gencode flags for its own
  # architecture list to CMAKE_CUDA_FLAGS (sm_50 among them, which nvcc 13
  # refuses) and turns CMAKE_CUDA_ARCHITECTURES off: the GPU engines keep
  # their own flags and architectures.
  set(bc_cuda_flags "${CMAKE_CUDA_FLAGS}")
  if(NOT TORCH_CUDA_ARCH_LIST)
    set(TORCH_CUDA_ARCH_LIST "8.0;9.0")
  endif()
  # PyTorch before 2.8 links CUDA::nvToolsExt, a library CUDA 12.9 and later
  # no longer ship (NVTX 3 is header-only): without the target, its config
  # fails to generate against this CUDA. An empty one stands in.
  if(CUDAToolkit_FOUND AND NOT TARGET CUDA::nvToolsExt)
    add_library(CUDA::nvToolsExt INTERFACE IMPORTED)
  endif()
  find_package(Torch QUIET)
  set(CMAKE_CUDA_FLAGS "${bc_cuda_flags}")
  if(Torch_FOUND OR TORCH_FOUND)
    set(BC_HAVE_TORCH ON)
    # libtorch and the interpreter's torch must be one install.
    string(REGEX MATCH "^[0-9]+\\.[0-9]+" bc_lib_mm "${Torch_VERSION}")
    string(REGEX MATCH "^[0-9]+\\.[0-9]+" bc_py_mm "${BC_TORCH_INFO_version}")
    if(BACKENDCHECK_TORCH_PYTHON AND NOT bc_lib_mm STREQUAL bc_py_mm)
      message(FATAL_ERROR "libtorch ${Torch_VERSION} (${TORCH_INSTALL_PREFIX}) is not the torch "
                          "${BC_TORCH_INFO_version} that ${BACKENDCHECK_TORCH_PYTHON} imports")
    endif()
    if(BACKENDCHECK_TORCH_PYTHON AND NOT BC_TORCH_INFO_abi EQUAL 1)
      message(FATAL_ERROR "torch ${BC_TORCH_INFO_version} (${BACKENDCHECK_TORCH_PYTHON}) uses the pre-C++11 "
                          "std::string ABI, which the harness cannot share objects with; PyPI's wheels use the "
                          "C++11 ABI from 2.7 on")
    endif()
    # TorchConfig sets CMAKE_CUDA_ARCHITECTURES from its own build; the GPU
    # engines are compiled for Ampere and Hopper (and what the user asks).
    if(BC_HAVE_CUDA)
      set(CMAKE_CUDA_ARCHITECTURES ${BACKENDCHECK_CUDA_ARCHITECTURES})
    endif()
    message(STATUS "backendcheck: PyTorch engine ON (libtorch ${Torch_VERSION}, ${TORCH_INSTALL_PREFIX})")
  elseif(BACKENDCHECK_WITH_TORCH STREQUAL "ON")
    message(FATAL_ERROR "BACKENDCHECK_WITH_TORCH=ON but libtorch was not found (name a torch with "
                        "-DBACKENDCHECK_TORCH_PYTHON=<python>, or install libtorch-dev)")
  else()
    message(STATUS "backendcheck: PyTorch engine OFF (libtorch not found)")
  endif()
endif()
