# Neo as a CMake package: `find_package(Neo)` from the build tree (via
# Neo_DIR=<build>/lib/cmake/neo) or from an install tree made by
# `cmake --install <build> --prefix <prefix>` (docs/embedding.md).
#
# Every library made with neo_add_library is exported as NeoTargets; the
# tools, the C API, the public headers (with the TableGen-generated .inc
# files) and NeoConfig.cmake are installed.

set(NEO_INSTALL_PACKAGE_DIR lib/cmake/neo)
set(NEO_BUILD_PACKAGE_DIR ${CMAKE_BINARY_DIR}/${NEO_INSTALL_PACKAGE_DIR})
get_property(NEO_EXPORTED_LIBS GLOBAL PROPERTY NEO_LIBS)

install(TARGETS ${NEO_EXPORTED_LIBS}
  EXPORT NeoTargets
  ARCHIVE DESTINATION lib COMPONENT neo
  LIBRARY DESTINATION lib COMPONENT neo
  INCLUDES DESTINATION include)
# Installed binaries find Neo's libraries next to them and libMLIR.so where
# it was when Neo was built.
set(neo_install_rpath "\$ORIGIN/../lib;${LLVM_LIBRARY_DIR}")
set_target_properties(NeoCAPI PROPERTIES INSTALL_RPATH "${neo_install_rpath}")
install(TARGETS NeoCAPI LIBRARY DESTINATION lib COMPONENT neo)
foreach(tool neo-opt neo-translate neo-run neo-tune)
  if(TARGET ${tool})
    set_target_properties(${tool} PROPERTIES INSTALL_RPATH "${neo_install_rpath}")
    install(TARGETS ${tool} RUNTIME DESTINATION bin COMPONENT neo)
  endif()
endforeach()

install(DIRECTORY include/neo include/neo-c
  DESTINATION include COMPONENT neo
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${CMAKE_BINARY_DIR}/include/neo
  DESTINATION include COMPONENT neo
  FILES_MATCHING PATTERN "*.inc"
  PATTERN "CMakeFiles" EXCLUDE)

# The build tree's package: targets point into the build and source trees.
export(EXPORT NeoTargets FILE ${NEO_BUILD_PACKAGE_DIR}/NeoTargets.cmake)
set(NEO_CONFIG_PREFIX_CODE "")
set(NEO_CONFIG_INCLUDE_DIRS "${NEO_SOURCE_DIR}/include;${NEO_BINARY_DIR}/include")
set(NEO_CONFIG_TOOLS_DIR "${NEO_TOOLS_DIR}")
set(NEO_CONFIG_LIBRARY_DIR "${CMAKE_BINARY_DIR}/lib")
configure_file(${CMAKE_CURRENT_LIST_DIR}/NeoConfig.cmake.in
               ${NEO_BUILD_PACKAGE_DIR}/NeoConfig.cmake @ONLY)

# The install tree's package: paths relative to where NeoConfig.cmake lies.
set(NEO_CONFIG_PREFIX_CODE [[
get_filename_component(NEO_INSTALL_PREFIX "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)]])
set(NEO_CONFIG_INCLUDE_DIRS "\${NEO_INSTALL_PREFIX}/include")
set(NEO_CONFIG_TOOLS_DIR "\${NEO_INSTALL_PREFIX}/bin")
set(NEO_CONFIG_LIBRARY_DIR "\${NEO_INSTALL_PREFIX}/lib")
configure_file(${CMAKE_CURRENT_LIST_DIR}/NeoConfig.cmake.in
               ${CMAKE_BINARY_DIR}/CMakeFiles/NeoConfig.install.cmake @ONLY)
install(EXPORT NeoTargets DESTINATION ${NEO_INSTALL_PACKAGE_DIR} COMPONENT neo)
install(FILES ${CMAKE_BINARY_DIR}/CMakeFiles/NeoConfig.install.cmake
  DESTINATION ${NEO_INSTALL_PACKAGE_DIR} RENAME NeoConfig.cmake COMPONENT neo)
