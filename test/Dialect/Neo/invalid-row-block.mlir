// RUN: neo-opt %s -split-input-file -verify-diagnostics
// One case per verifier message of row-blocked neo.fused kernels.

func.func @not_divisible(%a: tensor<6x4xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{'neo.fused' op row_block 4 does not divide the row extent 6}}
  %r = neo.fused ins(%a : tensor<6x4xf32>) row_block 4 -> (tensor<6xf32>) {
  ^bb0(%x: tensor<6x4xf32>):
    %s = neo.compute ins(%x : tensor<6x4xf32>) space [6] sum [4] maps [affine_map<(i, j) -> (i, j)>] -> tensor<6xf32> {
    ^bb0(%v: f32):
      neo.yield %v : f32
    }
    neo.return %s : tensor<6xf32>
  }
  return %r : tensor<6xf32>
}

// -----

func.func @zero_block(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'neo.fused' op attribute 'row_block' failed to satisfy constraint}}
  %r = neo.fused ins(%a : tensor<4xf32>) row_block 0 -> (tensor<4xf32>) {
  ^bb0(%x: tensor<4xf32>):
    %s = neo.compute ins(%x : tensor<4xf32>) space [4] maps [affine_map<(i) -> (i)>] -> tensor<4xf32> {
    ^bb0(%v: f32):
      neo.yield %v : f32
    }
    neo.return %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

func.func @other_extent(%a: tensor<8x4xf32>) -> (tensor<8xf32>, tensor<4xf32>) {
  %r:2 = neo.fused ins(%a : tensor<8x4xf32>) row_block 2 -> (tensor<8xf32>, tensor<4xf32>) {
  ^bb0(%x: tensor<8x4xf32>):
    %s = neo.compute ins(%x : tensor<8x4xf32>) space [8] sum [4] maps [affine_map<(i, j) -> (i, j)>] -> tensor<8xf32> {
    ^bb0(%v: f32):
      neo.yield %v : f32
    }
    // expected-error @+1 {{'neo.compute' op cannot run by rows: its leading parallel dim is not the kernel's rows (extent 8)}}
    %c = neo.compute ins(%x : tensor<8x4xf32>) space [4] sum [8] maps [affine_map<(j, i) -> (i, j)>] -> tensor<4xf32> {
    ^bb0(%v: f32):
      neo.yield %v : f32
    }
    neo.return %s, %c : tensor<8xf32>, tensor<4xf32>
  }
  return %r#0, %r#1 : tensor<8xf32>, tensor<4xf32>
}

// -----

func.func @row_domain(%a: tensor<8x4xf32>) -> tensor<8xf32> {
  %r = neo.fused ins(%a : tensor<8x4xf32>) row_block 2 -> (tensor<8xf32>) {
  ^bb0(%x: tensor<8x4xf32>):
    // expected-error @+1 {{'neo.compute' op cannot run by rows: its domain constrains d0}}
    %s = neo.compute ins(%x : tensor<8x4xf32>) space [8] sum [4] maps [affine_map<(i, j) -> (i, j)>] where affine_set<(i, j) : (i - j >= 0)> -> tensor<8xf32> {
    ^bb0(%v: f32):
      neo.yield %v : f32
    }
    neo.return %s : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

func.func @row_index(%a: tensor<8xf32>) -> tensor<8xf32> {
  %r = neo.fused ins(%a : tensor<8xf32>) row_block 2 -> (tensor<8xf32>) {
  ^bb0(%x: tensor<8xf32>):
    // expected-error @+1 {{'neo.compute' op cannot run by rows: its body reads neo.index 0}}
    %s = neo.compute ins(%x : tensor<8xf32>) space [8] maps [affine_map<(i) -> (i)>] -> tensor<8xf32> {
    ^bb0(%v: f32):
      %i = neo.index 0
      %n = arith.index_cast %i : index to i64
      %f = arith.sitofp %n : i64 to f32
      %m = arith.mulf %v, %f : f32
      neo.yield %m : f32
    }
    neo.return %s : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

func.func @shifted_read(%a: tensor<9xf32>) -> tensor<8xf32> {
  %r = neo.fused ins(%a : tensor<9xf32>) row_block 2 -> (tensor<8xf32>) {
  ^bb0(%x: tensor<9xf32>):
    // expected-error @+1 {{'neo.compute' op cannot run by rows: read #0 names d0 other than as a whole index into a dim of extent 8}}
    %s = neo.compute ins(%x : tensor<9xf32>) space [8] maps [affine_map<(i) -> (i + 1)>] -> tensor<8xf32> {
    ^bb0(%v: f32):
      neo.yield %v : f32
    }
    neo.return %s : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

func.func @transposed_internal(%a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %r = neo.fused ins(%a : tensor<8x8xf32>) row_block 2 -> (tensor<8x8xf32>) {
  ^bb0(%x: tensor<8x8xf32>):
    %e = neo.compute ins(%x : tensor<8x8xf32>) space [8, 8] maps [affine_map<(i, j) -> (i, j)>] -> tensor<8x8xf32> {
    ^bb0(%v: f32):
      %w = math.exp %v : f32
      neo.yield %w : f32
    }
    // expected-error @+1 {{'neo.compute' op cannot run by rows: read #0 of a value of the kernel does not take d0 as its first index}}
    %t = neo.compute ins(%e : tensor<8x8xf32>) space [8, 8] maps [affine_map<(i, j) -> (j, i)>] -> tensor<8x8xf32> {
    ^bb0(%v: f32):
      neo.yield %v : f32
    }
    neo.return %t : tensor<8x8xf32>
  }
  return %r : tensor<8x8xf32>
}

// -----

func.func @returns_operand(%a: tensor<8xf32>) -> tensor<8xf32> {
  %r = neo.fused ins(%a : tensor<8xf32>) row_block 2 -> (tensor<8xf32>) {
  ^bb0(%x: tensor<8xf32>):
    %s = neo.compute ins(%x : tensor<8xf32>) space [8] maps [affine_map<(i) -> (i)>] -> tensor<8xf32> {
    ^bb0(%v: f32):
      neo.yield %v : f32
    }
    // expected-error @+1 {{'neo.return' op of a row-blocked neo.fused returns an operand of the kernel}}
    neo.return %x : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

func.func @nested(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'neo.fused' op with row_block must hold neo.compute ops with a parallel dim}}
  %r = neo.fused ins(%a : tensor<8xf32>) row_block 2 -> (tensor<8xf32>) {
  ^bb0(%x: tensor<8xf32>):
    %c = neo.constant dense<1.0> : tensor<8xf32>
    neo.return %c : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// An index tensor read at 2 * d0: a block of rows cannot take a slice of it.
func.func @strided_index_read(%x: tensor<8xf32>, %idx: tensor<16xi32>) -> tensor<8xf32> {
  %r = neo.fused ins(%x, %idx : tensor<8xf32>, tensor<16xi32>) row_block 2 -> (tensor<8xf32>) {
  ^bb0(%a: tensor<8xf32>, %i: tensor<16xi32>):
    // expected-error @+1 {{'neo.compute' op cannot run by rows: index read #0 names d0 other than as d0 + c with a constant c >= 0}}
    %s = neo.compute ins(%a : tensor<8xf32>) indices(%i : tensor<16xi32>) space [8]
           maps [affine_map<(n)[s0] -> (s0)>] index_maps [affine_map<(n) -> (n * 2)>] checked [0] -> tensor<8xf32> {
    ^bb0(%v: f32):
      neo.yield %v : f32
    }
    neo.return %s : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}

// -----

// rowptr[i + 1] for 8 rows needs 9 row pointers.
func.func @short_row_pointers(%x: tensor<8xf32>, %rowptr: tensor<8xi32>) -> tensor<8xf32> {
  %r = neo.fused ins(%x, %rowptr : tensor<8xf32>, tensor<8xi32>) row_block 2 -> (tensor<8xf32>) {
  ^bb0(%a: tensor<8xf32>, %p: tensor<8xi32>):
    // expected-error @+1 {{'neo.compute' op cannot run by rows: index read #0 reads d0 + 1 in a dim of size 8, less than the rows' extent 8 + 1}}
    %s = neo.compute ins(%a : tensor<8xf32>) indices(%p : tensor<8xi32>) space [8]
           maps [affine_map<(n)[s0] -> (n)>] index_maps [affine_map<(n) -> (n + 1)>] -> tensor<8xf32> {
    ^bb0(%v: f32):
      %k = neo.index_read 0
      %c = arith.index_cast %k : index to i64
      %f = arith.sitofp %c : i64 to f32
      %w = arith.addf %v, %f : f32
      neo.yield %w : f32
    }
    neo.return %s : tensor<8xf32>
  }
  return %r : tensor<8xf32>
}
