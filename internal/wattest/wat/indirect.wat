;; Calls through a table, for wasmbin.DirectCalls: two segments (the second
;; overwrites index 2), holes (0, 4, 6, 7), functions of two types, and
;; call_indirect of three types, two of them the same type declared twice.
;; call2 and call1 take the table index first.
(module
  (type $bin (func (param i32 i32) (result i32)))
  (type $bin2 (func (param i32 i32) (result i32)))
  (type $un (func (param i32) (result i32)))
  (type $none (func))
  (table 8 funcref)
  (elem (i32.const 1) func $add $sub $neg)
  (elem (i32.const 2) funcref (ref.func $mul) (ref.null func) (ref.func $neg))
  (func $add (type $bin) (i32.add (local.get 0) (local.get 1)))
  (func $sub (type $bin) (i32.sub (local.get 0) (local.get 1)))
  (func $mul (type $bin2) (i32.mul (local.get 0) (local.get 1)))
  (func $neg (type $un) (i32.sub (i32.const 0) (local.get 0)))
  (func (export "call2") (param i32 i32 i32) (result i32)
    (call_indirect (type $bin) (local.get 1) (local.get 2) (local.get 0)))
  (func (export "call2b") (param i32 i32 i32) (result i32)
    (call_indirect (type $bin2) (local.get 1) (local.get 2) (local.get 0)))
  (func (export "call1") (param i32 i32) (result i32)
    (call_indirect (type $un) (local.get 1) (local.get 0)))
  (func (export "call0") (param i32)
    (call_indirect (type $none) (local.get 0))))
