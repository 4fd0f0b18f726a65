// RUN: neo-opt %s -split-input-file -neo-gpu-merge-modules -verify-diagnostics -allow-unregistered-dialect

// The merged module's name must be free.
// expected-error @below {{neo-gpu-merge-modules: a symbol named 'neo_kernels' exists already}}
module attributes {gpu.container_module} {
  func.func @neo_kernels() {
    return
  }
  gpu.module @f_kernel {
    gpu.func @f_kernel() kernel {
      gpu.return
    }
  }
}

// -----

// The outlined modules hold symbols (kernels and what they use) only.
module attributes {gpu.container_module} {
  gpu.module @f_kernel {
    gpu.func @f_kernel() kernel {
      gpu.return
    }
    // expected-error @below {{neo-gpu-merge-modules: unexpected op in a gpu.module}}
    "test.not_a_symbol"() : () -> ()
  }
}
