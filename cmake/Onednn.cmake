# The system's oneDNN for the model, any version from 2.6 on, 3.x included.
# oneDNN's own CMake config accepts a requested version only within its major
# version (find_package(dnnl 2.6) refuses a 3.x), so the version is asked for
# without one and checked here: a distribution's torch may link the system's
# oneDNN 3 (Debian trixie's 2.6 does), and the model then runs on that.

# Fails the configure, naming the version found, below oneDNN 2.6.
function(bc_check_onednn_version version)
  if(NOT version OR version VERSION_LESS 2.6)
    message(FATAL_ERROR "backendcheck: the model needs oneDNN 2.6 or later; the system's is "
                        "'${version}' (Debian: apt-get install libdnnl-dev; or name a prefix with "
                        "-DBACKENDCHECK_ONEDNN_ROOT)")
  endif()
endfunction()

macro(bc_find_system_onednn)
  find_package(dnnl REQUIRED)
  bc_check_onednn_version("${dnnl_VERSION}")
  message(STATUS "backendcheck: oneDNN ${dnnl_VERSION} for the model from the system (${dnnl_DIR})")
endmacro()
