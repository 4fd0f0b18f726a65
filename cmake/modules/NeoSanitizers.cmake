# Sanitizer and fuzzer instrumentation of Neo's own code (docs/testing.md).
#
#   NEO_SANITIZERS=address;undefined   instrument every Neo library, tool and
#                                      test with these sanitizers (clang or gcc)
#   NEO_BUILD_FUZZERS=ON               also add libFuzzer coverage to the
#                                      libraries and build the fuzz/ targets
#                                      (clang only)
#
# libMLIR.so and libLLVM.so stay uninstrumented; ASan still sees every heap
# access Neo's code makes, and UBSan checks Neo's arithmetic and casts.
set(NEO_SANITIZERS "" CACHE STRING
    "Sanitizers for Neo's code, e.g. 'address;undefined' (empty: none)")
option(NEO_BUILD_FUZZERS "Build the libFuzzer targets of fuzz/ (needs clang)" OFF)

if(NEO_SANITIZERS)
  list(JOIN NEO_SANITIZERS "," neo_sanitize)
  # Report the first error and stop: a sanitizer finding fails its test.
  add_compile_options(-fsanitize=${neo_sanitize} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=${neo_sanitize})
  # Shared libraries (libNeoCAPI.so) take the runtime from the executable
  # that loads them, so they cannot be linked with -z defs.
  foreach(flags CMAKE_SHARED_LINKER_FLAGS CMAKE_MODULE_LINKER_FLAGS)
    string(REPLACE "-Wl,-z,defs" "" ${flags} "${${flags}}")
  endforeach()
endif()

# Uninstrumented programs (python3 in test/Python) that load the instrumented
# libNeoCAPI.so preload this runtime (see test/lit.cfg.py).
set(NEO_ASAN_RUNTIME "")
if("address" IN_LIST NEO_SANITIZERS AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  execute_process(
    COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libclang_rt.asan-${CMAKE_SYSTEM_PROCESSOR}.so
    OUTPUT_VARIABLE NEO_ASAN_RUNTIME OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()

if(NEO_BUILD_FUZZERS)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "NEO_BUILD_FUZZERS needs clang (e.g. CMAKE_CXX_COMPILER=clang++-22)")
  endif()
  # Coverage feedback from the libraries; only the fuzz targets link libFuzzer.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()
