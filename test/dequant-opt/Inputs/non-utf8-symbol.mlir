llvm.func @"\ff"() {
  llvm.return
}
