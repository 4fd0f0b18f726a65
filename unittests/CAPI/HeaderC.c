/* Compiled as C: the public header must be valid C99. */
#include "neo-c/Neo.h"

int neoCHeaderCompilesAsC(void) {
  NeoTensor t = {0, NEO_F32, 0, 0};
  return t.type == NEO_F32 ? 1 : 0;
}
