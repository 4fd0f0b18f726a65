//===- CountNeoOps.h - A pass of the embedding project ----------*- C++ -*-===//
#ifndef MY_COUNTNEOOPS_H
#define MY_COUNTNEOOPS_H

namespace my {
/// Registers `my-count-neo-ops`.
void registerCountNeoOpsPass();
} // namespace my

#endif // MY_COUNTNEOOPS_H
