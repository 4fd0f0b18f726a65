# Provides the target nlohmann_json::nlohmann_json (header-only JSON reader):
# the installed package when CMake finds one, else the copy in
# third_party/nlohmann, so that code using it also builds where only the
# repository was copied (the GPU machines of tools/neo-cuda-runner).
# NEO_USE_VENDORED_JSON=ON forces the copy.
option(NEO_USE_VENDORED_JSON "Use third_party/nlohmann even if nlohmann_json is installed" OFF)
if(NOT TARGET nlohmann_json::nlohmann_json)
  if(NOT NEO_USE_VENDORED_JSON)
    find_package(nlohmann_json 3.2 QUIET)
  endif()
  if(nlohmann_json_FOUND AND NOT NEO_USE_VENDORED_JSON)
    message(STATUS "nlohmann_json: the installed package (${nlohmann_json_DIR})")
  else()
    get_filename_component(_neo_root "${CMAKE_CURRENT_LIST_DIR}/../.." ABSOLUTE)
    add_library(nlohmann_json::nlohmann_json INTERFACE IMPORTED)
    set_target_properties(nlohmann_json::nlohmann_json PROPERTIES
      INTERFACE_INCLUDE_DIRECTORIES "${_neo_root}/third_party")
    message(STATUS "nlohmann_json: the copy in ${_neo_root}/third_party/nlohmann")
  endif()
endif()
