# The sources of NeoSupport, relative to lib/Support (lib/Support/CMakeLists.txt,
# in Neo's build and in the standalone neo-cuda-runner's).
set(NEO_SUPPORT_SOURCES
  AtomicFile.cpp
  ElementType.cpp
  FileIO.cpp
  TemporaryFiles.cpp
)
