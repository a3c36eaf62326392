;; Every kind of immediate an instruction of WebAssembly 2.0 can carry, in
;; one module that validates: the corpus on which wasmbin's decoder is
;; checked against the engines. It is never run.
(module
  (type $t0 (func))
  (type $t1 (func (param i32) (result i32)))
  (type $multi (func (param i32 i64) (result i64 i32)))
  (memory 1)
  (table $tf 4 funcref)
  (table $te 2 externref)
  (global $g (mut i32) (i32.const 0))
  (global $g64 i64 (i64.const -9223372036854775808))
  (global $gf f32 (f32.const 1.5))
  (global $gd f64 (f64.const -2.25))
  (global $gv v128 (v128.const i32x4 1 2 3 4))
  (global $gr funcref (ref.func $f1))
  (global $gn externref (ref.null extern))
  (elem $e0 (i32.const 0) $f1 $f1)
  (elem $e1 func $f1)
  (elem $e2 funcref (ref.func $f1) (ref.null func))
  (elem $e3 declare func $f1)
  (elem $e4 (table $tf) (i32.const 2) funcref (ref.func $f1))
  (data $d0 (i32.const 16) "hello")
  (data $d1 "passive")
  (func $f1 (type $t1) (local.get 0))
  (func (export "_start") (local i32 i64 f32 f64 v128 funcref externref)
    ;; control, with every block type
    (block (nop))
    (block (result i32) (i32.const 1))
    drop
    (i32.const 1) (i64.const 2)
    (block (type $multi) (drop) (drop) (i64.const 3) (i32.const 4)) drop drop
    (loop $l (br_if $l (i32.const 0)))
    (if (i32.const 0) (then (unreachable)) (else (nop)))
    (block $a (block $b (block $c
      (br_table $a $b $c (i32.const 5))
    )))
    (block $out (br $out))
    (call $f1 (i32.const 3)) drop
    (call_indirect (type $t1) (i32.const 3) (i32.const 0)) drop
    (call_indirect $tf (type $t1) (i32.const 3) (i32.const 1)) drop
    ;; parametric
    (select (i32.const 1) (i32.const 2) (i32.const 0)) drop
    (select (result i64) (i64.const 1) (i64.const 2) (i32.const 0)) drop
    ;; variables
    (local.set 0 (i32.const 7))
    (local.tee 0 (local.get 0)) drop
    (global.set $g (global.get $g))
    ;; tables
    (table.set $tf (i32.const 0) (table.get $tf (i32.const 1)))
    (table.size $te) drop
    (table.grow $tf (ref.null func) (i32.const 0)) drop
    (table.fill $tf (i32.const 0) (ref.func $f1) (i32.const 0))
    (table.copy $tf $tf (i32.const 0) (i32.const 0) (i32.const 0))
    (table.init $tf $e1 (i32.const 0) (i32.const 0) (i32.const 0))
    (elem.drop $e1)
    ;; memory
    (i32.store offset=4 align=2 (i32.const 0) (i32.load8_u offset=70000 (i32.const 0)))
    (i64.store32 (i32.const 8) (i64.load (i32.const 8)))
    (f64.store (i32.const 8) (f64.load (i32.const 8)))
    (memory.size) drop
    (memory.grow (i32.const 0)) drop
    (memory.init $d1 (i32.const 0) (i32.const 0) (i32.const 0))
    (data.drop $d1)
    (memory.copy (i32.const 0) (i32.const 1) (i32.const 1))
    (memory.fill (i32.const 0) (i32.const 0) (i32.const 0))
    ;; numeric constants and operators, sign extension, saturation
    (i64.const 0x7fffffffffffffff) drop
    (f32.const -0x1.fffffep127) drop
    (f64.const nan:0x8000000000001) drop
    (i32.extend8_s (i32.add (i32.const -1) (i32.const 1))) drop
    (i32.trunc_sat_f64_u (f64.const 1e300)) drop
    (i64.trunc_sat_f32_s (f32.const -1)) drop
    ;; references
    (ref.is_null (ref.null extern)) drop
    (ref.func $f1) drop
    ;; SIMD: loads, stores, lanes, shuffles and plain operators
    (v128.store (i32.const 0) (v128.load offset=16 (i32.const 0)))
    (v128.load8x8_s (i32.const 0)) drop
    (v128.load32_splat (i32.const 0)) drop
    (v128.load64_zero (i32.const 0)) drop
    (v128.load16_lane 7 (i32.const 0) (v128.const i16x8 0 1 2 3 4 5 6 7)) drop
    (v128.store64_lane 1 (i32.const 0) (v128.const i64x2 1 2))
    (i8x16.shuffle 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 31 (local.get 4) (local.get 4)) drop
    (i8x16.extract_lane_u 15 (local.get 4)) drop
    (f64x2.replace_lane 1 (local.get 4) (f64.const 0)) drop
    (i32x4.dot_i16x8_s (local.get 4) (local.get 4)) drop
    (f64x2.promote_low_f32x4 (local.get 4)) drop
    (i64x2.extmul_high_i32x4_u (local.get 4) (local.get 4)) drop
    (v128.any_true (v128.bitselect (local.get 4) (local.get 4) (local.get 4))) drop
  )
)
