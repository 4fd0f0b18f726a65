# Helpers shared by Neo's libraries and tools.

# neo_add_library(name src...  [LINK lib...])
# A library of Neo linked to the single libMLIR.so. Upstream MLIR/LLVM components
# are reached through `MLIR` (and `LLVM` when llvm:: APIs are called directly).
function(neo_add_library name)
  cmake_parse_arguments(ARG "" "" "LINK;DEPENDS" ${ARGN})
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
  set_property(GLOBAL APPEND PROPERTY NEO_LIBS ${name})
endfunction()
