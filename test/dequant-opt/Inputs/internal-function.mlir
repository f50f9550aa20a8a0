// A function with internal linkage, called by a public one.
llvm.func internal @helper() {
  llvm.return
}
llvm.func @f() {
  llvm.call @helper() : () -> ()
  llvm.return
}
