# The sources of NeoSupport, relative to lib/Support: one list for the library
# (lib/Support/CMakeLists.txt) and for the standalone neo-cuda-runner
# (tools/neo-cuda-runner/CMakeLists.txt), which compiles them itself.
set(NEO_SUPPORT_SOURCES
  AtomicFile.cpp
  FileIO.cpp
  TemporaryFiles.cpp
)
