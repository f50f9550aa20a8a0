func.func @f() {
  return
}
{-#
  dialect_resources: { builtin: { "é": $ } }
#-}
