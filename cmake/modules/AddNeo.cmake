# Helpers shared by Neo's libraries and tools.

# NEO_PCH: the libraries reuse one precompiled header of upstream MLIR/LLVM
# headers (cmake/pch/NeoPCH.h), owned by the object library NeoPCH. Parsing
# those headers was about 80% of each source's compile time (docs/testing.md,
# CI). The top-level CMakeLists.txt calls neo_setup_pch() once, after every
# global flag, so that the targets that reuse it compile with the same flags.
option(NEO_PCH "Precompile the upstream headers Neo's libraries include" ON)
function(neo_setup_pch)
  if(NOT NEO_PCH)
    return()
  endif()
  add_library(NeoPCH OBJECT ${PROJECT_SOURCE_DIR}/cmake/pch/NeoPCH.cpp)
  set_target_properties(NeoPCH PROPERTIES POSITION_INDEPENDENT_CODE ON)
  llvm_update_compile_flags(NeoPCH)
  target_precompile_headers(NeoPCH PRIVATE ${PROJECT_SOURCE_DIR}/cmake/pch/NeoPCH.h)
endfunction()

# neo_use_pch(target): target's C++ sources reuse NeoPCH's precompiled header.
# An executable's objects are compiled -fPIC as well, as the header was (clang
# refuses a precompiled header made with another PIC level).
function(neo_use_pch target)
  if(NOT NEO_PCH)
    return()
  endif()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "EXECUTABLE")
    target_compile_options(${target} PRIVATE -fPIC)
  endif()
  target_precompile_headers(${target} REUSE_FROM NeoPCH)
endfunction()

# neo_add_library(name src...  [LINK lib...] [DEPENDS target...] [NO_PCH])
# A library of Neo linked to the single libMLIR.so. Upstream MLIR/LLVM components
# are reached through `MLIR` (and `LLVM` when llvm:: APIs are called directly).
# NO_PCH: the LLVM-free libraries, which must not see LLVM's headers.
function(neo_add_library name)
  cmake_parse_arguments(ARG "NO_PCH" "" "LINK;DEPENDS" ${ARGN})
  add_library(${name} ${ARG_UNPARSED_ARGUMENTS})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  target_link_libraries(${name} PUBLIC ${ARG_LINK})
  # Embedders get Neo's headers from the target (see NeoInstall.cmake).
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  llvm_update_compile_flags(${name})
  if(NOT ARG_NO_PCH)
    neo_use_pch(${name})
  endif()
  set_property(GLOBAL APPEND PROPERTY NEO_LIBS ${name})
endfunction()
