// Only a global: no function, nothing to compile.
llvm.mlir.global internal constant @g(1 : i32) : i32
