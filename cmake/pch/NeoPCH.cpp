// The target that owns Neo's precompiled header (cmake/pch/NeoPCH.h); the
// libraries reuse it. It compiles nothing of its own.
